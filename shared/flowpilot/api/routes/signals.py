"""``/signals``: incoming work (a lead, a complaint, a request), planned in the background."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from flowpilot.api.deps import DB, Caller
from flowpilot.errors import NotFound
from flowpilot.signals.models import NewSignal

router = APIRouter(tags=["signals"])


class SignalAccepted(BaseModel):
    signal_id: uuid.UUID
    status: str


class SignalView(BaseModel):
    signal_id: uuid.UUID
    kind: str
    title: str
    body: str
    status: str
    plan: dict[str, Any] | None = None
    created_at: dt.datetime
    completed_at: dt.datetime | None = None


@router.post("/signals", response_model=SignalAccepted, status_code=202)
def create(signal: NewSignal, caller: Caller, db: DB) -> dict[str, Any]:
    """Committed with its outbox row before anything is sent, so it is never lost."""
    from flowpilot.signals.intake import create_signal

    caller.require("signals")
    return create_signal(db, caller.tenant_id, signal)


@router.get("/signals/{signal_id}", response_model=SignalView)
def show(signal_id: uuid.UUID, caller: Caller, db: DB) -> dict[str, Any]:
    row = db.one(caller.tenant_id, "signal_get", signal_id=signal_id)
    if row is None:
        raise NotFound("no such signal", code="signal_not_found")
    return {**row, "plan": (row["strategic_analysis"] or {}).get("ai_planner")}
