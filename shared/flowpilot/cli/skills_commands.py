"""``flowpilot skills sync|list|lint``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from flowpilot.cli.output import emit
from flowpilot.cli.tenants import add_tenant_option, resolve_tenant


def register(sub: Any) -> None:
    skills = sub.add_parser("skills", help="skill packs: sync, list, lint")
    actions = skills.add_subparsers(dest="action", required=True, metavar="ACTION")

    sync = actions.add_parser("sync", help="upsert skill packs (the built-in pack by default)")
    sync.add_argument("files", nargs="*", type=Path, help="YAML skill packs")
    add_tenant_option(sync)
    sync.add_argument("--json", action="store_true")
    sync.set_defaults(handler=_sync)

    listing = actions.add_parser("list", help="the tenant's registered skills")
    add_tenant_option(listing)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)

    lint = actions.add_parser("lint", help="check packs; exit 1 when anything is found")
    lint.add_argument("files", nargs="*", type=Path, help="YAML packs (default: built-in)")
    lint.add_argument("--json", action="store_true")
    lint.set_defaults(handler=_lint)


def _sync(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.skills.registry import sync_packs
    from flowpilot.skills.spec import builtin_pack, load_pack

    db = get_db()
    tenant = resolve_tenant(db, args.tenant)
    packs = [load_pack(path) for path in args.files] if args.files else [builtin_pack()]
    report = sync_packs(db, tenant, packs).to_dict()
    emit(
        report,
        as_json=args.json,
        human=lambda r: ", ".join(f"{len(v)} {k}" for k, v in r.items()),
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.skills.registry import list_skills

    db = get_db()
    skills = list_skills(db, resolve_tenant(db, args.tenant))
    emit(
        skills,
        as_json=args.json,
        human=lambda rows: "\n".join(
            f"{r['name']:<28} {r['side_effects']:<5} {r['trust_level']:<8} "
            f"{'on ' if r['enabled'] and r['module_enabled'] else 'off'} {r['handler']}"
            for r in rows
        ),
    )
    return 0


def _lint(args: argparse.Namespace) -> int:
    from flowpilot.skills.linter import lint_builtin, lint_files

    findings = lint_files(args.files) if args.files else lint_builtin()
    if args.json:
        emit([f.__dict__ for f in findings], as_json=True)
    else:
        for finding in findings:
            sys.stdout.write(finding.line() + "\n")
        if not findings:
            sys.stdout.write("no findings\n")
    return 1 if findings else 0
