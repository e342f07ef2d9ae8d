"""``flowpilot objectives create|list|show|update|pause|resume|complete``."""

from __future__ import annotations

import argparse
import uuid
from typing import TYPE_CHECKING, Any

from flowpilot.cli.output import emit
from flowpilot.cli.tenants import add_tenant_option, resolve_tenant
from flowpilot.errors import InvalidRequest

if TYPE_CHECKING:
    from flowpilot.objectives import ObjectiveView

STATUSES = ("open", "paused", "completed", "failed", "cancelled")


def register(sub: Any) -> None:
    objectives = sub.add_parser("objectives", help="the ranked goals the heartbeat works toward")
    actions = objectives.add_subparsers(dest="action", required=True, metavar="ACTION")

    create = actions.add_parser("create", help="a new objective")
    create.add_argument("goal")
    create.add_argument("--priority", type=int, default=50, help="0-100 (default 50)")
    _content_options(create)
    _common(create, _create)

    listing = actions.add_parser("list", help="objectives, open ones first")
    listing.add_argument("--status", choices=STATUSES)
    _common(listing, _list)

    show = actions.add_parser("show", help="one objective with its plan and KPIs")
    show.add_argument("objective_id", type=uuid.UUID)
    _common(show, _show)

    update = actions.add_parser("update", help="change an objective (lists given replace)")
    update.add_argument("objective_id", type=uuid.UUID)
    update.add_argument("--goal")
    update.add_argument("--priority", type=int)
    update.add_argument("--note", help="add a note to its progress")
    _content_options(update)
    _common(update, _update)

    for verb, help_text in (
        ("pause", "stop the heartbeat working on it"),
        ("resume", "hand a paused objective back to the heartbeat"),
    ):
        move = actions.add_parser(verb, help=help_text)
        move.add_argument("objective_id", type=uuid.UUID)
        _common(move, _move)

    complete = actions.add_parser("complete", help="close it as met")
    complete.add_argument("objective_id", type=uuid.UUID)
    complete.add_argument("--summary")
    _common(complete, _complete)


def _content_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--criterion", action="append", dest="criteria", help="a success criterion (repeat)"
    )
    parser.add_argument(
        "--kpi", action="append", dest="kpis", type=parse_kpi, help="name:target[:unit] (repeat)"
    )
    parser.add_argument("--step", action="append", dest="steps", help="a plan step (repeat)")


def _common(parser: argparse.ArgumentParser, handler: Any) -> None:
    add_tenant_option(parser)
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=handler)


def parse_kpi(text: str) -> dict[str, Any]:
    """``visits:500:per week`` -> a KPI named visits with target 500 and unit "per week"."""
    name, _, rest = text.partition(":")
    target, _, unit = rest.partition(":")
    if not name.strip() or not target.strip():
        raise argparse.ArgumentTypeError(f"a KPI is name:target[:unit], not {text!r}")
    return {"name": name.strip(), "target": _number(target.strip()), "unit": unit.strip() or None}


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _create(args: argparse.Namespace) -> int:
    from flowpilot.objectives import ObjectiveIn, create

    objective = _validated(
        ObjectiveIn,
        goal=args.goal,
        priority=args.priority,
        success_criteria=args.criteria or [],
        kpis=args.kpis or [],
        plan=args.steps or [],
    )
    db, tenant = _tenant(args)
    _show_one(create(db, tenant, objective), args.json)
    return 0


def _list(args: argparse.Namespace) -> int:
    from flowpilot.objectives import list_objectives

    db, tenant = _tenant(args)
    found = list_objectives(db, tenant, args.status)
    emit(
        [o.model_dump(mode="json") for o in found],
        as_json=args.json,
        human=lambda rows: "\n".join(_line(r) for r in rows) or "no objectives",
    )
    return 0


def _show(args: argparse.Namespace) -> int:
    from flowpilot.objectives import get

    db, tenant = _tenant(args)
    _show_one(get(db, tenant, args.objective_id), args.json)
    return 0


def _update(args: argparse.Namespace) -> int:
    from flowpilot.objectives import ObjectiveUpdate, update

    given = {
        "goal": args.goal,
        "priority": args.priority,
        "note": args.note,
        "success_criteria": args.criteria,
        "kpis": args.kpis,
        "plan": args.steps,
    }
    changes = _validated(ObjectiveUpdate, **{k: v for k, v in given.items() if v is not None})
    db, tenant = _tenant(args)
    _show_one(update(db, tenant, args.objective_id, changes), args.json)
    return 0


def _move(args: argparse.Namespace) -> int:
    from flowpilot import objectives

    db, tenant = _tenant(args)
    verb = objectives.pause if args.action == "pause" else objectives.resume
    _show_one(verb(db, tenant, args.objective_id), args.json)
    return 0


def _complete(args: argparse.Namespace) -> int:
    from flowpilot.objectives import complete

    db, tenant = _tenant(args)
    _show_one(complete(db, tenant, args.objective_id, args.summary), args.json)
    return 0


def _tenant(args: argparse.Namespace) -> tuple[Any, uuid.UUID]:
    from flowpilot.db import get_db

    db = get_db()
    return db, resolve_tenant(db, args.tenant)


def _validated(model: Any, **fields: Any) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidRequest(problems, code="invalid_request") from None


def _show_one(objective: ObjectiveView, as_json: bool) -> None:
    emit(objective.model_dump(mode="json"), as_json=as_json, human=_details)


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['objective_id']}  {row['status']:<9} p{row['priority']:<3} "
        f"{row['percent_done']:>5.1f}%  {row['goal']}"
    )


def _details(row: dict[str, Any]) -> str:
    lines = [_line(row)]
    lines += [f"  success: {criterion}" for criterion in row["success_criteria"]]
    for kpi in row["kpis"]:
        unit = f" {kpi['unit']}" if kpi.get("unit") else ""
        current = "-" if kpi.get("current") is None else kpi["current"]
        lines.append(f"  kpi {kpi['name']}: {current} of {kpi['target']}{unit}")
    plan = row["progress"]["plan"]
    for index, step in enumerate(plan):
        marker = ">" if index == row["progress"]["cursor"] else " "
        lines.append(f"  {marker} [{step['status']}] {step['step']}")
    return "\n".join(lines)
