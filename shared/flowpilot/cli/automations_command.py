"""``flowpilot automations list|create|enable|disable|delete``."""

from __future__ import annotations

import argparse
import json
import uuid
from typing import TYPE_CHECKING, Any

from flowpilot.cli.output import emit
from flowpilot.cli.tenants import add_tenant_option, resolve_tenant
from flowpilot.errors import InvalidRequest

if TYPE_CHECKING:
    from flowpilot.automations.models import Automation
    from flowpilot.db import Database


def register(sub: Any) -> None:
    automations = sub.add_parser(
        "automations", help="skills run on a schedule or when an event or signal arrives"
    )
    actions = automations.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser("list", help="the tenant's automations")
    _common(listing, _list)

    create = actions.add_parser("create", help="a new automation")
    create.add_argument("name")
    create.add_argument("--skill", required=True, help="the skill to run")
    trigger = create.add_mutually_exclusive_group(required=True)
    trigger.add_argument("--cron", help="'MIN HOUR DOM MON DOW' (UTC) or 'rate(5 minutes)'")
    trigger.add_argument("--event", help="run when an agent event of this kind is recorded")
    trigger.add_argument("--signal", help="run when a signal of this kind arrives")
    create.add_argument(
        "--arguments",
        type=_json_object,
        default={},
        help='the skill\'s arguments as JSON: {"k": 1}',
    )
    create.add_argument(
        "--executor",
        choices=("platform", "flowpilot"),
        default="platform",
        help="platform runs the skill as written; flowpilot asks the reasoning engine",
    )
    _common(create, _create)

    for verb, help_text in (
        ("enable", "switch it on (it resumes from its next time)"),
        ("disable", "switch it off"),
        ("delete", "remove it"),
    ):
        change = actions.add_parser(verb, help=help_text)
        change.add_argument("automation_id", type=uuid.UUID)
        _common(change, _change)


def _common(parser: argparse.ArgumentParser, handler: Any) -> None:
    add_tenant_option(parser)
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=handler)


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("the arguments must be a JSON object")
    return value


def _tenant(args: argparse.Namespace) -> tuple[Database, uuid.UUID]:
    from flowpilot.db import get_db

    db = get_db()
    return db, resolve_tenant(db, args.tenant)


def _list(args: argparse.Namespace) -> int:
    from flowpilot.automations.store import list_automations

    db, tenant = _tenant(args)
    rows = [a.model_dump(mode="json") for a in list_automations(db, tenant)]
    emit(
        rows,
        as_json=args.json,
        human=lambda items: "\n".join(_line(r) for r in items) or "no automations",
    )
    return 0


def _create(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from flowpilot.automations.models import NewAutomation
    from flowpilot.automations.store import create_automation

    kind, spec = next(
        (k, getattr(args, k)) for k in ("cron", "event", "signal") if getattr(args, k)
    )
    try:
        new = NewAutomation(
            name=args.name,
            trigger_kind=kind,
            trigger_spec=spec,
            skill=args.skill,
            arguments=args.arguments,
            executor=args.executor,
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidRequest(problems, code="invalid_request") from None
    db, tenant = _tenant(args)
    _show(create_automation(db, tenant, new), args.json)
    return 0


def _change(args: argparse.Namespace) -> int:
    from flowpilot.automations import store

    db, tenant = _tenant(args)
    if args.action == "delete":
        store.delete_automation(db, tenant, args.automation_id)
        emit({"deleted": str(args.automation_id)}, as_json=args.json, human=lambda _: "deleted")
        return 0
    changed = store.set_enabled(db, tenant, args.automation_id, args.action == "enable")
    _show(changed, args.json)
    return 0


def _show(automation: Automation, as_json: bool) -> None:
    emit(automation.model_dump(mode="json"), as_json=as_json, human=_line)


def _line(row: dict[str, Any]) -> str:
    state = "on " if row["enabled"] else "off"
    trigger = (
        row["trigger_spec"]
        if row["trigger_kind"] == "cron"
        else (f"on {row['trigger_kind']} {row['trigger_spec']}")
    )
    when = f"next {row['next_run_at']}" if row["next_run_at"] else ""
    last = f"last: {row['last_outcome']}" if row["last_outcome"] else ""
    details = "  ".join(part for part in (when, last) if part)
    return (
        f"{row['automation_id']}  {state} {row['name']}: {row['skill']} ({row['executor']}) "
        f"[{trigger}]  {details}"
    ).rstrip()
