"""``flowpilot approvals list|approve ID|reject ID``."""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from flowpilot.cli.output import emit
from flowpilot.cli.tenants import add_tenant_option, resolve_tenant


def register(sub: Any) -> None:
    approvals = sub.add_parser("approvals", help="operations waiting for a person's decision")
    actions = approvals.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser("list", help="approvals (pending by default)")
    listing.add_argument("--status", default="pending", help="pending, approved, ..., or all")
    add_tenant_option(listing)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)

    for verb in ("approve", "reject"):
        decide = actions.add_parser(verb, help=f"{verb} an approval (approve runs it once)")
        decide.add_argument("approval_id", type=uuid.UUID)
        add_tenant_option(decide)
        decide.add_argument("--json", action="store_true")
        decide.set_defaults(handler=_decide, approve=verb == "approve")


def _list(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.execute.approvals import list_approvals

    db = get_db()
    status = None if args.status == "all" else args.status
    rows = list_approvals(db, resolve_tenant(db, args.tenant), status=status)
    emit(
        rows,
        as_json=args.json,
        human=lambda items: "\n".join(_line(r) for r in items) or "nothing waiting",
    )
    return 0


def _line(row: dict[str, Any]) -> str:
    expires = f"{row['expires_at']:%Y-%m-%d %H:%M}"
    return f"{row['approval_id']}  {row['status']:<9} {row['skill']:<16} expires {expires}"


def _decide(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.reasoning.decisions import decide

    db = get_db()
    approval, execution = decide(
        db, resolve_tenant(db, args.tenant), args.approval_id, approve=args.approve, by="cli"
    )
    result = {
        "approval": approval,
        "execution": execution.model_dump(mode="json") if execution else None,
    }
    emit(
        result,
        as_json=args.json,
        human=lambda r: (
            f"approval {r['approval']['status']}"
            + (f"; execution {r['execution']['status']}" if r["execution"] else "")
        ),
    )
    return 0 if execution is None or execution.status == "executed" else 1
