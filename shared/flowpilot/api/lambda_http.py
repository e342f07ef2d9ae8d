"""API Gateway events into the FastAPI apps, through Mangum."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from mangum import Mangum

from flowpilot.api.http_events import invalid_event_response, is_http_event


@cache
def _adapter(factory_name: str) -> Callable[[Any, Any], dict[str, Any]]:
    from flowpilot.api import app as apps

    factory: Callable[[], Any] = getattr(apps, factory_name)
    return Mangum(factory(), lifespan="off")


def warm(factory_name: str) -> None:
    """Build an app's adapter now (at import, in the Lambda init phase)."""
    _adapter(factory_name)


def serve(factory_name: str, event: Any, context: Any) -> dict[str, Any]:
    if not is_http_event(event):
        return invalid_event_response(
            "expected an API Gateway HTTP request (payload 2.0 or 1.0) with a requestContext"
        )
    return _adapter(factory_name)(event, context)


def chat_handler(event: Any, context: Any) -> dict[str, Any]:
    return serve("create_chat_app", event, context)
