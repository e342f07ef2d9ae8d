"""``/objectives``: the ranked goals the heartbeat works toward, as people manage them."""

from __future__ import annotations

import uuid

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from flowpilot import objectives
from flowpilot.api.deps import DB, Caller
from flowpilot.objectives import ObjectiveIn, ObjectiveStatus, ObjectiveUpdate, ObjectiveView

router = APIRouter(tags=["objectives"])


class CompleteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    summary: str | None = Field(None, max_length=objectives.MAX_ITEM_CHARS)


@router.get("/objectives", response_model=list[ObjectiveView])
def list_objectives(
    caller: Caller, db: DB, status: ObjectiveStatus | None = None
) -> list[ObjectiveView]:
    caller.require("objectives")
    return objectives.list_objectives(db, caller.tenant_id, status)


@router.post("/objectives", response_model=ObjectiveView, status_code=201)
def create_objective(body: ObjectiveIn, caller: Caller, db: DB) -> ObjectiveView:
    caller.require("objectives")
    return objectives.create(db, caller.tenant_id, body)


@router.get("/objectives/{objective_id}", response_model=ObjectiveView)
def get_objective(objective_id: uuid.UUID, caller: Caller, db: DB) -> ObjectiveView:
    caller.require("objectives")
    return objectives.get(db, caller.tenant_id, objective_id)


@router.patch("/objectives/{objective_id}", response_model=ObjectiveView)
def update_objective(
    objective_id: uuid.UUID, body: ObjectiveUpdate, caller: Caller, db: DB
) -> ObjectiveView:
    caller.require("objectives")
    return objectives.update(db, caller.tenant_id, objective_id, body)


@router.post("/objectives/{objective_id}/pause", response_model=ObjectiveView)
def pause_objective(objective_id: uuid.UUID, caller: Caller, db: DB) -> ObjectiveView:
    caller.require("objectives")
    return objectives.pause(db, caller.tenant_id, objective_id)


@router.post("/objectives/{objective_id}/resume", response_model=ObjectiveView)
def resume_objective(objective_id: uuid.UUID, caller: Caller, db: DB) -> ObjectiveView:
    caller.require("objectives")
    return objectives.resume(db, caller.tenant_id, objective_id)


@router.post("/objectives/{objective_id}/complete", response_model=ObjectiveView)
def complete_objective(
    objective_id: uuid.UUID, caller: Caller, db: DB, body: CompleteBody | None = None
) -> ObjectiveView:
    caller.require("objectives")
    summary = body.summary if body is not None else None
    return objectives.complete(db, caller.tenant_id, objective_id, summary)
