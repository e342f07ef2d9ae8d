"""One exception tree, mapped to HTTP once.

Every error a caller can see carries a stable ``code`` (for programs) and a ``message``
(for people). :func:`error_body` is the only place that turns one into a response body.
"""

from __future__ import annotations

from typing import Any, ClassVar


class FlowPilotError(Exception):
    """Root of every error FlowPilot raises on purpose."""

    code: ClassVar[str] = "internal_error"
    status: ClassVar[int] = 500

    def __init__(self, message: str, *, code: str | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code  # type: ignore[misc]

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body


class ConfigError(FlowPilotError):
    code = "config_invalid"
    status = 500


class InvalidRequest(FlowPilotError):
    code = "invalid_request"
    status = 400


class InvalidEvent(InvalidRequest):
    """A Lambda event that does not have the shape its function accepts."""

    code = "invalid_event"


class Unauthorized(FlowPilotError):
    code = "unauthorized"
    status = 401


class Forbidden(FlowPilotError):
    code = "forbidden"
    status = 403


class NotFound(FlowPilotError):
    code = "not_found"
    status = 404


class Conflict(FlowPilotError):
    code = "conflict"
    status = 409


class Busy(Conflict):
    """Someone else holds the lease or claim; try later."""

    code = "busy"


class PayloadTooLarge(FlowPilotError):
    code = "payload_too_large"
    status = 413


class SkillRefused(FlowPilotError):
    code = "skill_refused"
    status = 403


class BudgetExceeded(FlowPilotError):
    code = "budget_exceeded"
    status = 429


class ModelError(FlowPilotError):
    code = "model_error"
    status = 502


class ModelTimeout(ModelError):
    code = "model_timeout"
    status = 504


class DatabaseError(FlowPilotError):
    code = "database_error"
    status = 503


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON body for any exception; unexpected ones reveal nothing inside."""
    if isinstance(exc, FlowPilotError):
        return exc.status, {"error": exc.to_dict()}
    return 500, {"error": {"code": "internal_error", "message": "Something went wrong."}}
