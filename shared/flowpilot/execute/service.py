"""The execute pipeline: every skill execution, from every caller, passes through here."""

from __future__ import annotations

from flowpilot.db import Database, get_db
from flowpilot.execute.models import ExecuteRequest, ExecuteResult


def execute(request: ExecuteRequest, *, db: Database | None = None) -> ExecuteResult:
    db = db or get_db()
    skill = db.one(request.tenant_id, "skill_get", name=request.skill)
    if skill is None:
        return ExecuteResult.problem(
            "refused", "unknown_skill", f"there is no skill named {request.skill!r}"
        )
    return ExecuteResult.problem(
        "refused", "handler_unavailable", f"skill {request.skill!r} has no runnable handler"
    )
