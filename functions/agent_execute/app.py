"""AgentExecuteFunction: the one place where skills run (direct invoke or HTTP)."""

from __future__ import annotations

from typing import Any

from flowpilot.execute.lambda_entry import handle_event
from flowpilot.observability import lambda_entry


@lambda_entry
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return handle_event(event, context)
