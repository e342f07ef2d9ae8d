"""AgentExecuteFunction's work: an API Gateway request or a direct-invoke payload."""

from __future__ import annotations

from typing import Any

from flowpilot.api.http_events import is_http_event


def handle_event(event: Any, context: Any) -> dict[str, Any]:
    if is_http_event(event):
        from flowpilot.api.lambda_http import serve

        return serve("create_execute_app", event, context)
    return handle_direct(event)


def handle_direct(event: Any) -> dict[str, Any]:
    """The direct-invoke contract: a request in, an ExecuteResult out, never a traceback."""
    from pydantic import ValidationError

    from flowpilot.execute.models import ExecuteRequest, ExecuteResult
    from flowpilot.execute.service import execute

    try:
        request = ExecuteRequest.model_validate(event)
    except ValidationError as exc:
        problems = [
            {"field": ".".join(str(p) for p in err["loc"]) or "(event)", "problem": err["msg"]}
            for err in exc.errors()
        ]
        result = ExecuteResult.problem(
            "invalid", "invalid_request", "the execute request is malformed", problems
        )
    else:
        result = execute(request)
    return result.model_dump(mode="json")
