"""``POST /execute``: run a skill as the authenticated caller (agent-execute's HTTP door)."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from flowpilot.api.deps import DB, Caller
from flowpilot.execute.models import Actor, ExecuteRequest, ExecuteResult

router = APIRouter(tags=["execute"])

HTTP_STATUS = {
    "executed": 200,
    "pending_approval": 202,
    "invalid": 422,
    "refused": 403,
    "failed": 502,
}


class ExecuteBody(BaseModel):
    """The caller's part of an execution; tenant and actor come from authentication."""

    model_config = ConfigDict(extra="forbid")

    skill: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    idempotency_key: str | None = Field(None, min_length=1, max_length=200)
    approval_id: uuid.UUID | None = None


@router.post("/execute", response_model=ExecuteResult)
def execute_skill(body: ExecuteBody, caller: Caller, db: DB, response: Response) -> ExecuteResult:
    from flowpilot.execute.service import execute

    caller.require("execute")
    request = ExecuteRequest(
        tenant_id=caller.tenant_id,
        actor=Actor(type="user", id=caller.subject),
        **body.model_dump(),
    )
    result = execute(request, db=db)
    response.status_code = HTTP_STATUS[result.status]
    return result
