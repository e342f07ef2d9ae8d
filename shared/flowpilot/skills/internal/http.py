"""``http_request``: one bounded HTTPS call (10 s, 512 KB, no redirects); trust ``approve``."""

from __future__ import annotations

import json
from typing import Any

from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers.http_client import bounded_request
from flowpilot.skills.handlers.internal import internal

METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
TIMEOUT_S = 10.0
MAX_BYTES = 512 * 1024
MAX_TEXT = 4_000


@internal("http_request")
def http_request(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    method = str(arguments.get("method") or "GET").upper()
    url = arguments.get("url")
    headers = {h["name"]: h["value"] for h in arguments.get("headers") or []}
    body_text = arguments.get("json_body")
    try:
        json_body = json.loads(body_text) if body_text else None
    except json.JSONDecodeError as exc:
        raise SkillFailed(f"json_body is not valid JSON: {exc}", code="invalid_arguments") from None
    if method not in METHODS:
        raise SkillFailed(
            f"method must be one of {', '.join(sorted(METHODS))}", code="invalid_arguments"
        )
    if not isinstance(url, str) or not url:
        raise SkillFailed("url is required", code="invalid_arguments")
    result = bounded_request(
        method,
        url,
        json_body=json_body,
        headers=headers,
        timeout_s=TIMEOUT_S,
        max_bytes=MAX_BYTES,
    )
    if result.json is not None:
        return {"status": result.status, "json": result.json}
    text = result.text
    return {"status": result.status, "text": text[:MAX_TEXT], "truncated": len(text) > MAX_TEXT}
