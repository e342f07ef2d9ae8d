"""HeartbeatFunction's work: tick every tenant with due work (or the one named)."""

from __future__ import annotations

import uuid
from typing import Any

from flowpilot.errors import InvalidEvent, error_body
from flowpilot.observability import logger


def parse_target(event: Any) -> uuid.UUID | None:
    """The tenant a fan-out event names, or None for a scheduled tick of all tenants.

    Accepted: the EventBridge Scheduler envelope (``detail`` an object or the string "{}"),
    ``{}``, or ``{"tenant_id": "..."}``.
    """
    if not isinstance(event, dict):
        raise InvalidEvent("expected a JSON object (an EventBridge Scheduler event)")
    tenant = event.get("tenant_id")
    if tenant is None and isinstance(event.get("detail"), dict):
        tenant = event["detail"].get("tenant_id")
    if tenant is None:
        return None
    try:
        return uuid.UUID(str(tenant))
    except ValueError:
        raise InvalidEvent(f"tenant_id is not a UUID: {tenant!r}") from None


def handle_schedule(event: Any) -> dict[str, Any]:
    try:
        target = parse_target(event)
    except InvalidEvent as exc:
        # A malformed event is not retried: it would fail the same way again.
        logger.warning("malformed heartbeat event", error=exc.message)
        return {"ok": False, **error_body(exc)[1]}
    from flowpilot.db import get_db
    from flowpilot.heartbeat.scheduler import run_heartbeat, run_scheduled

    if target is not None:  # a fanned-out tick for one tenant
        reports = run_heartbeat(get_db(), tenant_id=target)
        return {"ok": True, "ticks": [report.to_dict() for report in reports], "fanned_out": 0}
    scheduled = run_scheduled(get_db())
    return {
        "ok": True,
        "ticks": [report.to_dict() for report in scheduled.ticks],
        "fanned_out": scheduled.fanned_out,
    }
