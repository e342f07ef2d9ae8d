"""``create_signal``: the agent raises a signal of its own, planned like any other."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from flowpilot.signals.intake import create_signal as intake_signal
from flowpilot.signals.models import NewSignal
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers.internal import internal


@internal("create_signal")
def create_signal(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        signal = NewSignal(
            title=str(arguments.get("title") or "").strip(),
            body=arguments.get("body") or "",
            kind=arguments.get("kind") or "generic",
            project_id=arguments.get("project_id") or None,
            source="flowpilot",
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise SkillFailed(f"not a valid signal: {problems}", code="invalid_signal") from None
    # An unknown (or another tenant's) project is refused by intake as project_not_found.
    created = intake_signal(ctx.db, ctx.tenant_id, signal)
    return {"signal_id": str(created["signal_id"]), "status": created["status"]}
