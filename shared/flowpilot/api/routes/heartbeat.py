"""``/heartbeat``: run one heartbeat tick for the caller's tenant now (platform admins)."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from flowpilot.api.deps import DB, Admin

router = APIRouter(tags=["heartbeat"])


class TickView(BaseModel):
    """What one tick did: its outcome, its model use and, when it worked, on what."""

    tenant_id: uuid.UUID
    outcome: str
    model_calls: int = 0
    tokens: int = 0
    objective_id: uuid.UUID | None = None
    skill: str | None = None
    reason: str | None = None


@router.post("/heartbeat", response_model=list[TickView])
def run_tick(caller: Admin, db: DB) -> list[dict[str, Any]]:
    from flowpilot.heartbeat.scheduler import run_heartbeat

    return [report.to_dict() for report in run_heartbeat(db, tenant_id=caller.tenant_id)]
