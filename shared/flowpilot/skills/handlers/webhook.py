"""``webhook:<url>``: POST the skill call as signed JSON to a receiver the tenant runs.

The receiver checks ``X-FlowPilot-Signature: sha256=<hex>``, an HMAC-SHA256 of
``"<X-FlowPilot-Timestamp>.<raw body>"`` under the shared webhook secret, with
:func:`verify_signature`. Nothing is ever sent unsigned.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

from flowpilot.config import Settings
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers.http_client import bounded_request, url_problem

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_BYTES = 1_000_000
SIGNATURE_HEADER = "X-FlowPilot-Signature"
TIMESTAMP_HEADER = "X-FlowPilot-Timestamp"
SKILL_HEADER = "X-FlowPilot-Skill"
# Rotated secrets are picked up within this many seconds (Powertools caches the value).
SECRET_MAX_AGE_S = 300


def sign(secret: str | bytes, timestamp: int | str, body: bytes) -> str:
    """The signature header value for ``body`` sent at ``timestamp``."""
    key = secret.encode() if isinstance(secret, str) else secret
    message = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(key, message, hashlib.sha256).hexdigest()


def verify_signature(
    secret: str | bytes,
    timestamp: int | str,
    body: bytes | str,
    header: str,
    *,
    tolerance_s: float = 300,
    now: float | None = None,
) -> bool:
    """Whether ``header`` signs ``body`` at ``timestamp``, within ``tolerance_s`` of now.

    For receivers: pass the raw request body exactly as received, not re-serialised JSON.
    """
    try:
        sent_at = int(str(timestamp).strip())
    except ValueError:
        return False
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance_s:
        return False
    raw = body.encode() if isinstance(body, str) else body
    expected = sign(secret, sent_at, raw)
    return hmac.compare_digest(expected.encode(), header.strip().encode())


def webhook_secret(settings: Settings) -> str | None:
    if settings.webhook_secret:
        return settings.webhook_secret
    if settings.webhook_secret_arn:
        from aws_lambda_powertools.utilities import parameters

        value = parameters.get_secret(settings.webhook_secret_arn, max_age=SECRET_MAX_AGE_S)
        return value if isinstance(value, str) else value.decode()
    return None


def run(ctx: SkillContext, arguments: dict[str, Any]) -> Any:
    secret = webhook_secret(ctx.settings)
    if not secret:
        raise SkillFailed(
            "webhook skills need a signing secret (FLOWPILOT_WEBHOOK_SECRET or "
            "WEBHOOK_SECRET_ARN); nothing was sent",
            code="webhook_unsigned",
        )
    config = ctx.config
    name = str(ctx.skill["name"])
    payload = {
        "skill": name,
        "tenant_id": str(ctx.tenant_id),
        "arguments": arguments,
        "actor": ctx.actor.model_dump(mode="json"),
        "run_id": str(ctx.run_id) if ctx.run_id else None,
    }
    body = json.dumps(payload, separators=(",", ":"), default=str).encode()
    timestamp = int(time.time())
    result = bounded_request(
        "POST",
        ctx.target,
        content=body,
        headers={
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(secret, timestamp, body),
            TIMESTAMP_HEADER: str(timestamp),
            SKILL_HEADER: name,
        },
        timeout_s=float(config.get("timeout_s", DEFAULT_TIMEOUT_S)),
        max_bytes=int(config.get("max_bytes", DEFAULT_MAX_BYTES)),
    )
    if not result.ok:
        raise SkillFailed(
            f"the webhook for {name} answered HTTP {result.status}",
            code="webhook_error",
            details={"status": result.status},
        )
    return result.json if result.json is not None else {"status": result.status}


def problem(target: str, config: dict[str, Any]) -> str | None:
    found = url_problem(target)
    if found is not None:
        return found
    for key in ("timeout_s", "max_bytes"):
        value = config.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            return f"webhook config {key} must be a positive number, not {value!r}"
    return None
