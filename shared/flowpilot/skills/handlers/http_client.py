"""One bounded HTTP call for skill handlers: HTTPS only, a deadline, a size cap, no redirects.

Plain ``http://`` is allowed only to this machine (127.0.0.0/8, ``localhost``, ``::1``), for
local development and tests. httpx is imported on first use, so a module that merely registers
a skill built on this costs nothing until the skill runs.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from flowpilot.skills.context import SkillFailed

_LOOPBACK_NAMES = frozenset({"localhost"})


@dataclass(frozen=True)
class HttpResult:
    status: int
    headers: dict[str, str] = field(repr=False)
    body: bytes = field(repr=False)
    json: Any | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine, decided without DNS."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def url_problem(url: str) -> str | None:
    """Why ``url`` may not be called, or None when the policy allows it."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return f"{url!r} is not a valid URL"
    if not host:
        return f"{url!r} has no host"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and is_loopback(host):
        return None
    return f"{url!r} is not allowed: use https:// (plain http only to this machine)"


def bounded_request(
    method: str,
    url: str,
    *,
    json_body: Any = None,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 10.0,
    max_bytes: int = 1_000_000,
) -> HttpResult:
    """Send one request and read at most ``max_bytes`` of its (decoded) response body.

    ``content`` sends exact bytes (a signed body); ``json_body`` lets httpx serialise.
    Failures are :class:`SkillFailed` with codes ``insecure_url``, ``timeout``,
    ``unreachable``, ``response_too_large`` or ``bad_response``.
    """
    problem = url_problem(url)
    if problem is not None:
        raise SkillFailed(problem, code="insecure_url")
    import httpx

    deadline = time.monotonic() + timeout_s
    try:
        with (
            httpx.Client(timeout=timeout_s, follow_redirects=False) as client,
            client.stream(
                method.upper(),
                url,
                json=json_body if content is None else None,
                content=content,
                headers=dict(headers or {}),
            ) as response,
        ):
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise _too_large(url, max_bytes)
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise _too_large(url, max_bytes)
                chunks.append(chunk)
                # The per-read timeout alone would let a slow trickle run on indefinitely.
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("overall deadline passed")
            body = b"".join(chunks)
            result_headers = {key.lower(): value for key, value in response.headers.items()}
            status = response.status_code
    except httpx.TimeoutException:
        raise SkillFailed(
            f"{_origin(url)} did not answer within {timeout_s:g} seconds", code="timeout"
        ) from None
    except httpx.TransportError as exc:
        raise SkillFailed(
            f"could not reach {_origin(url)}: {exc or type(exc).__name__}", code="unreachable"
        ) from None
    except httpx.HTTPError as exc:
        raise SkillFailed(
            f"{_origin(url)} sent a response that could not be read: {exc}", code="bad_response"
        ) from None
    return HttpResult(status, result_headers, body, _json_of(result_headers, body))


def _too_large(url: str, max_bytes: int) -> SkillFailed:
    return SkillFailed(
        f"the response from {_origin(url)} is larger than {max_bytes:,} bytes",
        code="response_too_large",
    )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _json_of(headers: Mapping[str, str], body: bytes) -> Any | None:
    kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if not body or not (kind == "application/json" or kind.endswith("+json")):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None
