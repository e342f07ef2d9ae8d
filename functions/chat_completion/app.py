"""ChatCompletionFunction: the HTTP front door (FastAPI through Mangum)."""

from __future__ import annotations

from typing import Any

from flowpilot.api.chat_lambda import chat_handler
from flowpilot.observability import lambda_entry


@lambda_entry
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return chat_handler(event, context)
