"""SignalPlannerFunction: post-commit planning of signals from SQS, one record at a time."""

from __future__ import annotations

from typing import Any

from flowpilot.observability import lambda_entry
from flowpilot.signals.lambda_entry import handle_batch


@lambda_entry
def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    return handle_batch(event, context)
