"""Calling the real FastAPI apps the way API Gateway does: v2 events through Mangum."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from flowpilot.testing.events import load_event


@dataclass
class ApiResponse:
    status: int
    headers: dict[str, str]
    body: Any

    @property
    def error_code(self) -> str | None:
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return str(self.body["error"].get("code"))
        return None


def api_event(
    method: str,
    path: str,
    *,
    body: Any = None,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    raw_body: str | None = None,
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, shaped like the recorded one in events/."""
    event = copy.deepcopy(load_event("agent_execute_http"))
    text = raw_body if raw_body is not None else (None if body is None else json.dumps(body))
    base = {
        key: value
        for key, value in event["headers"].items()
        if key not in {"authorization", "content-length"}
    }
    merged = {**base, **{k.lower(): v for k, v in (headers or {}).items()}}
    if text is not None:
        merged["content-length"] = str(len(text.encode()))
    event.update(
        routeKey="ANY /{proxy+}",
        rawPath=path,
        rawQueryString=urlencode(query or {}),
        headers=merged,
        body=text,
        pathParameters={"proxy": path.lstrip("/")},
    )
    if text is None:
        event.pop("body", None)
    event["requestContext"]["http"].update(method=method.upper(), path=path)
    event["requestContext"]["routeKey"] = "ANY /{proxy+}"
    return event


def call(handler: Any, method: str, path: str, **options: Any) -> ApiResponse:
    """Send one request event to a Lambda handler (or Mangum adapter) and decode the reply."""

    class _Context:
        function_name = "test"
        memory_limit_in_mb = 512
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:test"
        aws_request_id = "test-request"

        @staticmethod
        def get_remaining_time_in_millis() -> int:
            return 30_000

    raw = handler(api_event(method, path, **options), _Context())
    text = raw.get("body") or ""
    try:
        decoded: Any = json.loads(text) if text else None
    except json.JSONDecodeError:
        decoded = text
    return ApiResponse(status=raw["statusCode"], headers=raw.get("headers", {}), body=decoded)
