"""Building the FastAPI apps: error mapping, body limits, health, and the routers."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from flowpilot import __version__
from flowpilot.config import get_settings
from flowpilot.errors import FlowPilotError, PayloadTooLarge, error_body
from flowpilot.observability import logger


def _base_app(title: str) -> FastAPI:
    app = FastAPI(title=title, version=__version__)

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Any) -> Any:
        limit = get_settings().max_body_bytes
        declared = request.headers.get("content-length")
        body_size = int(declared) if declared and declared.isdigit() else None
        if body_size is None and request.method in {"POST", "PUT", "PATCH"}:
            body_size = len(await request.body())
        if body_size is not None and body_size > limit:
            status, body = error_body(
                PayloadTooLarge(f"request body over {limit} bytes", details={"limit": limit})
            )
            return JSONResponse(body, status_code=status)
        return await call_next(request)

    @app.exception_handler(FlowPilotError)
    async def flowpilot_error(_: Request, exc: FlowPilotError) -> JSONResponse:
        status, body = error_body(exc)
        return JSONResponse(body, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {"field": ".".join(str(p) for p in err["loc"]), "problem": err["msg"]}
            for err in exc.errors()
        ]
        body = {
            "error": {
                "code": "invalid_request",
                "message": "the request does not match the expected shape",
                "details": problems,
            }
        }
        return JSONResponse(body, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        body = {"error": {"code": code, "message": str(exc.detail)}}
        return JSONResponse(body, status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        status, body = error_body(exc)
        return JSONResponse(body, status_code=status)

    return app


def _chat_routers() -> list[Any]:
    from flowpilot.api.routes import (
        approvals,
        automations,
        briefing,
        health,
        heartbeat,
        model_routing,
        objectives,
        signals,
        skills,
        soul,
        threads,
    )

    return [
        health.router,
        approvals.router,
        skills.router,
        threads.router,
        model_routing.router,
        objectives.router,
        soul.router,
        briefing.router,
        heartbeat.router,
        automations.router,
        signals.router,
    ]


def _execute_routers() -> list[Any]:
    from flowpilot.api.routes import execute

    return [execute.router]


def _app(title: str, routers: list[Any]) -> FastAPI:
    app = _base_app(title)
    for router in routers:
        app.include_router(router)
    return app


def create_chat_app() -> FastAPI:
    """ChatCompletionFunction's API."""
    return _app("FlowPilot", _chat_routers())


def create_execute_app() -> FastAPI:
    """AgentExecuteFunction's API routes (``/execute``, ``/mcp``) and health."""
    from flowpilot.api.routes import health

    return _app("FlowPilot agent-execute", [health.router, *_execute_routers()])


def create_local_app() -> FastAPI:
    """Both HTTP functions on one port, as ``flowpilot up`` serves them."""
    return _app("FlowPilot (local)", [*_chat_routers(), *_execute_routers()])
