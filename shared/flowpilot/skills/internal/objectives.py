"""``objective_create``, ``objective_update_progress`` and ``objective_complete``.

An objective's progress document holds its plan (steps with a status), a cursor at the first
unfinished step, and the latest notes: ``{"plan": [{"step", "status"}], "cursor", "notes"}``.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from flowpilot.db import as_json
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers.internal import internal

STEP_STATUSES = ("pending", "done", "skipped", "failed")
FINISHED = frozenset({"done", "skipped"})
MAX_NOTES = 20


def objective_uuid(value: Any) -> uuid.UUID:
    """The objective id a model passed, or the not-found failure it deserves."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise SkillFailed(f"there is no objective {value!r}", code="objective_not_found") from None


def new_progress(plan: list[str] | None) -> dict[str, Any]:
    steps = [text.strip() for text in plan or [] if text and text.strip()]
    return {"plan": [{"step": text, "status": "pending"} for text in steps], "cursor": 0}


def first_unfinished(plan: list[dict[str, Any]]) -> int:
    """The cursor: the first step neither done nor skipped (the plan's length when none)."""
    return next((i for i, step in enumerate(plan) if step.get("status") not in FINISHED), len(plan))


def advance(
    progress: dict[str, Any],
    kpis: list[dict[str, Any]],
    *,
    step_index: int | None = None,
    step_status: str | None = None,
    note: str | None = None,
    kpi_updates: list[dict[str, Any]] | None = None,
    now: datetime | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """New (progress, kpis) after one update; a step or KPI that does not exist fails."""
    progress = dict(progress)
    plan = [dict(step) for step in progress.get("plan") or []]
    if step_index is not None or step_status is not None:
        index = first_unfinished(plan) if step_index is None else step_index
        if not 0 <= index < len(plan):
            raise SkillFailed(
                f"the plan has {len(plan)} steps; there is no step {index}",
                code="step_out_of_range",
            )
        status = step_status or "done"
        if status not in STEP_STATUSES:
            raise SkillFailed(
                f"step_status must be one of {', '.join(STEP_STATUSES)}", code="invalid_status"
            )
        plan[index]["status"] = status
    progress["plan"] = plan
    progress["cursor"] = first_unfinished(plan)
    if note and note.strip():
        stamp = (now or datetime.now(UTC)).isoformat()
        notes = [*(progress.get("notes") or []), {"at": stamp, "note": note.strip()}]
        progress["notes"] = notes[-MAX_NOTES:]
    return progress, _update_kpis(kpis, kpi_updates or [])


def _update_kpis(kpis: list[dict[str, Any]], updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result = [dict(kpi) for kpi in kpis]
    by_name = {str(kpi.get("name", "")).strip().lower(): kpi for kpi in result}
    for update in updates:
        name = str(update.get("name") or "").strip()
        kpi = by_name.get(name.lower())
        if kpi is None:
            known = ", ".join(str(k.get("name")) for k in result) or "none"
            raise SkillFailed(
                f"this objective has no KPI named {name!r} (its KPIs: {known})",
                code="unknown_kpi",
            )
        kpi["current"] = update.get("current")
    return result


def _clean_kpis(kpis: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    cleaned = []
    for kpi in kpis or []:
        name = str(kpi.get("name") or "").strip()
        if name:
            cleaned.append(
                {
                    "name": name,
                    "target": kpi.get("target"),
                    "current": kpi.get("current"),
                    "unit": kpi.get("unit"),
                }
            )
    names = [str(kpi["name"]).lower() for kpi in cleaned]
    if len(set(names)) != len(names):
        raise SkillFailed("two KPIs share a name", code="duplicate_kpi")
    return cleaned


def _progress_summary(objective: dict[str, Any]) -> dict[str, Any]:
    plan = objective["progress"].get("plan") or []
    cursor = objective["progress"].get("cursor", 0)
    return {
        **objective,
        "steps_done": sum(1 for step in plan if step.get("status") in FINISHED),
        "steps_total": len(plan),
        "next_step": plan[cursor]["step"] if cursor < len(plan) else None,
    }


@internal("objective_create")
def objective_create(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    goal = str(arguments.get("goal") or "").strip()
    if not goal:
        raise SkillFailed("an objective needs a goal", code="empty_goal")
    priority = arguments.get("priority")
    criteria = [str(c).strip() for c in arguments.get("success_criteria") or [] if str(c).strip()]
    row = ctx.db.one(
        ctx.tenant_id,
        "objective_insert",
        goal=goal[:2000],
        priority=50 if priority is None else max(0, min(100, int(priority))),
        success_criteria=as_json(criteria),
        kpis=as_json(_clean_kpis(arguments.get("kpis"))),
        progress=new_progress(arguments.get("plan")),
        run_id=ctx.run_id,
    )
    assert row is not None
    return _progress_summary(row["objective"])


@internal("objective_update_progress")
def objective_update_progress(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    objective_id = objective_uuid(arguments.get("objective_id"))
    step_index = arguments.get("step_index")
    step_status = arguments.get("step_status")
    note = arguments.get("note")
    with ctx.db.transaction(ctx.tenant_id) as tx:
        current = tx.one("objective_lock", objective_id=objective_id)
        if current is None:
            raise SkillFailed(f"there is no objective {objective_id}", code="objective_not_found")
        if current["status"] not in ("open", "paused"):
            raise SkillFailed(
                f"the objective is already {current['status']}", code="objective_closed"
            )
        progress, kpis = advance(
            current["progress"],
            current["kpis"],
            step_index=step_index,
            step_status=step_status,
            note=note,
            kpi_updates=arguments.get("kpi_updates"),
        )
        details: dict[str, Any] = {"cursor": progress["cursor"]}
        if step_index is not None or step_status is not None:
            details["step_status"] = step_status or "done"
        if arguments.get("kpi_updates"):
            details["kpis"] = {str(k["name"]): k.get("current") for k in arguments["kpi_updates"]}
        row = tx.one(
            "objective_save_progress",
            objective_id=objective_id,
            progress=progress,
            kpis=as_json(kpis),
            summary=_event_summary(current["goal"], progress, note),
            details=details,
            run_id=ctx.run_id,
        )
    assert row is not None
    return _progress_summary(row["objective"])


def _event_summary(goal: str, progress: dict[str, Any], note: str | None) -> str:
    plan = progress["plan"]
    done = sum(1 for step in plan if step.get("status") in FINISHED)
    text = f"Progress on {goal[:120]!r}: {done}/{len(plan)} steps done"
    return f"{text}. {note.strip()[:200]}" if note and note.strip() else text


@internal("objective_complete")
def objective_complete(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    objective_id = objective_uuid(arguments.get("objective_id"))
    summary = str(arguments.get("summary") or "").strip() or None
    row = ctx.db.one(
        ctx.tenant_id,
        "objective_transition",
        objective_id=objective_id,
        from_statuses=["open", "paused"],
        to_status="completed",
        summary=summary,
        run_id=ctx.run_id,
    )
    if row is None:
        raise SkillFailed(f"there is no objective {objective_id}", code="objective_not_found")
    objective = row["objective"]
    if not row["changed"] and objective["status"] != "completed":
        raise SkillFailed(
            f"the objective is already {objective['status']}", code="objective_closed"
        )
    return {**_progress_summary(objective), "already_completed": not row["changed"]}
