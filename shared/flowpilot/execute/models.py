"""The execute contract every caller speaks: in-process, Lambda invoke, HTTP and CLI."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ActorType = Literal["user", "flowpilot", "peer", "automation"]
Status = Literal["executed", "pending_approval", "refused", "invalid", "failed"]
TrustLevel = Literal["auto", "notify", "approve", "blocked"]


class Actor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ActorType
    id: str = Field(min_length=1, max_length=200)


class ExecuteRequest(BaseModel):
    """One skill execution. ``tenant_id`` comes from the authenticated caller, never a model."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: uuid.UUID
    actor: Actor
    skill: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    idempotency_key: str | None = Field(None, min_length=1, max_length=200)
    approval_id: uuid.UUID | None = None
    run_id: uuid.UUID | None = None


class ExecuteError(BaseModel):
    code: str
    message: str
    details: Any = None


class ExecuteResult(BaseModel):
    status: Status
    result: Any = None
    approval_id: uuid.UUID | None = None
    trust_level: TrustLevel | None = None
    error: ExecuteError | None = None

    @classmethod
    def problem(cls, status: Status, code: str, message: str, details: Any = None) -> ExecuteResult:
        return cls(status=status, error=ExecuteError(code=code, message=message, details=details))
