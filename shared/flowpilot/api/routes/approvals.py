"""``/approvals``: what waits for a person, and their decision (followed through at once)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel

from flowpilot.api.deps import DB, Caller
from flowpilot.execute.models import ExecuteResult

router = APIRouter(tags=["approvals"])


class Approval(BaseModel):
    approval_id: uuid.UUID
    skill: str
    arguments: dict[str, Any]
    requested_by: dict[str, Any]
    reason: str | None = None
    status: str
    decided_by: str | None = None
    decided_at: dt.datetime | None = None
    expires_at: dt.datetime
    created_at: dt.datetime
    result: dict[str, Any] | None = None


class Decision(BaseModel):
    approval: Approval
    execution: ExecuteResult | None = None


@router.get("/approvals", response_model=list[Approval])
def list_approvals(
    caller: Caller,
    db: DB,
    status: Literal["pending", "approved", "rejected", "expired", "executed", "failed"]
    | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    from flowpilot.execute import approvals

    return approvals.list_approvals(db, caller.tenant_id, status=status, limit=min(limit, 200))


@router.post("/approvals/{approval_id}/approve", response_model=Decision)
def approve(approval_id: uuid.UUID, caller: Caller, db: DB) -> Decision:
    from flowpilot.reasoning.decisions import decide

    caller.require("approvals")
    approval, execution = decide(db, caller.tenant_id, approval_id, approve=True, by=caller.subject)
    return Decision(approval=Approval.model_validate(approval), execution=execution)


@router.post("/approvals/{approval_id}/reject", response_model=Decision)
def reject(approval_id: uuid.UUID, caller: Caller, db: DB) -> Decision:
    from flowpilot.reasoning.decisions import decide

    caller.require("approvals")
    approval, _ = decide(db, caller.tenant_id, approval_id, approve=False, by=caller.subject)
    return Decision(approval=Approval.model_validate(approval))
