"""``flowpilot soul show|set``: the agent's identity, voice, values and constraints."""

from __future__ import annotations

import argparse
from typing import Any

from flowpilot.cli.output import emit
from flowpilot.cli.tenants import add_tenant_option, resolve_tenant
from flowpilot.errors import InvalidRequest


def register(sub: Any) -> None:
    soul = sub.add_parser("soul", help="who the agent is: identity, voice, values, constraints")
    actions = soul.add_subparsers(dest="action", required=True, metavar="ACTION")

    show = actions.add_parser("show", help="the soul as every run reads it")
    add_tenant_option(show)
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)

    change = actions.add_parser("set", help="replace the fields given, keep the others")
    change.add_argument("--identity", help="who the agent is, in a few sentences")
    change.add_argument("--voice", help="how it speaks")
    change.add_argument("--value", action="append", dest="values", help="a value (repeat)")
    change.add_argument(
        "--constraint", action="append", dest="constraints", help="a hard rule (repeat)"
    )
    add_tenant_option(change)
    change.add_argument("--json", action="store_true")
    change.set_defaults(handler=_set)


def _show(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.soul import get_soul

    db = get_db()
    soul = get_soul(db, resolve_tenant(db, args.tenant))
    emit(soul.model_dump(mode="json"), as_json=args.json, human=_human)
    return 0


def _set(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from flowpilot.db import get_db
    from flowpilot.soul import Soul, get_soul, set_soul

    given = {
        "identity": args.identity,
        "voice": args.voice,
        "values": args.values,
        "constraints": args.constraints,
    }
    changes = {key: value for key, value in given.items() if value is not None}
    if not changes:
        raise InvalidRequest(
            "give at least one of --identity, --voice, --value, --constraint", code="nothing_to_set"
        )
    db = get_db()
    tenant = resolve_tenant(db, args.tenant)
    current = get_soul(db, tenant).model_dump(exclude={"updated_at"})
    try:
        soul = Soul.model_validate({**current, **changes})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise InvalidRequest(problems, code="invalid_request") from None
    saved = set_soul(db, tenant, soul, by="cli")
    emit(saved.model_dump(mode="json"), as_json=args.json, human=_human)
    return 0


def _human(soul: dict[str, Any]) -> str:
    lines = [
        f"identity: {soul['identity'] or '-'}",
        f"voice: {soul['voice'] or '-'}",
        "values:",
        *(f"  - {value}" for value in soul["values"]),
        "constraints:",
        *(f"  - {constraint}" for constraint in soul["constraints"]),
    ]
    return "\n".join(lines)
