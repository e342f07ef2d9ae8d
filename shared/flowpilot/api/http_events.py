"""Recognising API Gateway events, without importing any web framework."""

from __future__ import annotations

import json
from typing import Any

from flowpilot.errors import InvalidEvent, error_body


def is_http_event(event: Any) -> bool:
    """An API Gateway (REST v1 or HTTP API v2) or function URL request."""
    return (
        isinstance(event, dict)
        and isinstance(event.get("requestContext"), dict)
        and ("httpMethod" in event or "http" in event["requestContext"])
    )


def invalid_event_response(message: str) -> dict[str, Any]:
    status, body = error_body(InvalidEvent(message))
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }
