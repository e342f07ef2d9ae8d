"""HeartbeatFunction: an EventBridge Scheduler tick that wakes the operator."""

from __future__ import annotations

from typing import Any

from flowpilot.heartbeat.lambda_entry import handle_schedule
from flowpilot.observability import lambda_entry


@lambda_entry
def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    return handle_schedule(event)
