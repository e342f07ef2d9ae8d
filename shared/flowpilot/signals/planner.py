"""Post-commit planning of one signal: claim it, load its context, plan, record the plan.

Planning never loses or doubles a signal: the claim is one conditional UPDATE (a duplicate
delivery finds nothing to claim and is acknowledged), and a hard failure marks the signal
failed and leaves a compensation message in the outbox in the same statement.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.errors import FlowPilotError
from flowpilot.observability import logger
from flowpilot.signals.models import SignalMessage

# A claim older than this is treated as abandoned (the planner's timeout is 60 s).
STALE_CLAIM_S = 300


def plan_signal(db: Database, message: SignalMessage) -> dict[str, Any]:
    """Plan one signal; returns what happened (``planned`` or ``duplicate``)."""
    tenant = message.tenant_id
    signal = db.one(tenant, "signal_claim", signal_id=message.signal_id, stale_s=STALE_CLAIM_S)
    if signal is None:
        logger.info(
            "signal already claimed or done; acknowledged", signal_id=str(message.signal_id)
        )
        return {"signal_id": str(message.signal_id), "outcome": "duplicate"}
    try:
        context = db.one(tenant, "signal_context", project_id=signal["project_id"]) or {}
        plan = degraded_plan(signal, context)
        db.one(tenant, "signal_complete", signal_id=message.signal_id, plan=plan)
    except FlowPilotError as exc:
        _compensate(db, tenant, message.signal_id, exc.message)
        raise
    return {"signal_id": str(message.signal_id), "outcome": "planned", "fallback": True}


def degraded_plan(signal: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """A plan made without a model: route to the least-loaded member, one triage step."""
    members = context.get("members") or []
    owner = members[0] if members else None
    steps = [
        {"step": 1, "action": "triage", "summary": f"Review: {signal['title']}"},
        {"step": 2, "action": "respond", "summary": "Reply to the requester with next steps"},
    ]
    return {
        "fallback_mode": True,
        "planned_at": time.time(),
        "summary": f"Triage '{signal['title']}'"
        + (f" and hand it to {owner['name']}" if owner else ""),
        "owner": owner,
        "steps": steps,
        "skills_available": context.get("skills") or [],
    }


def _compensate(db: Database, tenant: uuid.UUID, signal_id: uuid.UUID, reason: str) -> None:
    try:
        db.one(tenant, "signal_fail", signal_id=signal_id, reason=reason[:500])
    except FlowPilotError:
        logger.exception("could not record the signal's failure", signal_id=str(signal_id))
