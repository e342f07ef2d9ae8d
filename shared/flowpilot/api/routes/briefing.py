"""``/briefing``: what needs attention, in numbers and in a few plain sentences."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from flowpilot.api.deps import DB, Caller

router = APIRouter(tags=["briefing"])


class PendingApproval(BaseModel):
    approval_id: uuid.UUID
    skill: str
    reason: str | None = None
    created_at: dt.datetime
    expires_at: dt.datetime


class Approvals(BaseModel):
    pending: int
    top: list[PendingApproval]


class OpenObjective(BaseModel):
    objective_id: uuid.UUID
    goal: str
    priority: int
    steps_done: int
    steps_total: int
    next_step: str | None = None
    kpis: list[dict[str, Any]]
    updated_at: dt.datetime


class Event(BaseModel):
    kind: str
    summary: str
    created_at: dt.datetime


class Failure(BaseModel):
    skill: str | None = None
    outcome: str
    action: str | None = None
    error: str | None = None
    created_at: dt.datetime


class Failures(BaseModel):
    count: int
    recent: list[Failure]


class Tokens(BaseModel):
    today: int
    budget: int | None = None
    percent_of_budget: float | None = None


class FlaggedSkill(BaseModel):
    skill: str
    bad_outcomes: int
    last_critique: str | None = None


class Briefing(BaseModel):
    """Pending approvals, open objectives, recent events and failures, waiting signals,
    today's tokens against the budget, skills that keep missing, and a plain summary."""

    summary: str
    approvals: Approvals
    objectives: list[OpenObjective]
    recent_events: list[Event]
    failures: Failures
    signals_waiting: int
    tokens: Tokens
    flagged_skills: list[FlaggedSkill]
    generated_at: dt.datetime


@router.get("/briefing", response_model=Briefing)
def briefing(caller: Caller, db: DB) -> dict[str, Any]:
    from flowpilot.skills.internal.briefing import build_briefing

    return build_briefing(db, caller.tenant_id)
