"""``reflect``: the critique after a write; its lesson becomes a memory the agent recalls."""

from __future__ import annotations

from typing import Any

from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers.internal import internal
from flowpilot.skills.internal.objectives import objective_uuid

OUTCOMES = ("success", "partial", "no_effect", "negative")


@internal("reflect")
def reflect(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    outcome = arguments.get("outcome")
    if outcome not in OUTCOMES:
        raise SkillFailed(f"outcome must be one of {', '.join(OUTCOMES)}", code="invalid_outcome")
    critique = str(arguments.get("critique") or "").strip()
    if not critique:
        raise SkillFailed("a reflection needs a critique", code="empty_critique")
    objective = arguments.get("objective_id")
    objective_id = objective_uuid(objective) if objective else None
    row = ctx.db.one(
        ctx.tenant_id,
        "reflection_insert",
        run_id=ctx.run_id,
        objective_id=objective_id,
        skill=str(arguments.get("skill") or "").strip() or None,
        outcome=outcome,
        critique=critique,
        lesson=str(arguments.get("lesson") or "").strip() or None,
    )
    if row is None:
        raise SkillFailed(f"there is no objective {objective}", code="objective_not_found")
    return {"reflection_id": row["reflection_id"], "lesson_memory_id": row["lesson_memory_id"]}
