"""``flowpilot seed demo [--json] [--if-empty]``: a demo tenant that works on its own."""

from __future__ import annotations

import argparse
from typing import Any

from flowpilot.cli.output import emit


def register(sub: Any) -> None:
    seed = sub.add_parser("seed", help="create sample data")
    actions = seed.add_subparsers(dest="action", required=True, metavar="WHAT")
    demo = actions.add_parser("demo", help="a demo tenant: soul, objectives, skills")
    demo.add_argument("--if-empty", action="store_true", help="only when there is no tenant yet")
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.local.demo import seed_demo

    db = get_db()
    if args.if_empty and db.all(None, "tenant_ids_sample"):
        emit({"seeded": False}, as_json=args.json, human=lambda _: "tenants exist; not seeding")
        return 0
    result = seed_demo(db)
    emit(
        result,
        as_json=args.json,
        human=lambda r: (
            f"demo tenant {r['tenant_id']} created with {len(r['objectives'])} objectives\n"
            f"API key (shown once): {r['api_key']}"
        ),
    )
    return 0
