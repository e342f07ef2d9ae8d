"""Objectives as people manage them: create, list, read, change, pause, resume, complete.

The progress document and its rules (plan steps, cursor, notes) belong to the objective
skills in ``flowpilot.skills.internal.objectives``; this module reuses them and their SQL, so
a person and the agent change an objective the same way.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from flowpilot.db import Database, as_json
from flowpilot.errors import Conflict, NotFound
from flowpilot.skills.internal.objectives import FINISHED, advance, first_unfinished, new_progress

ObjectiveStatus = Literal["open", "paused", "completed", "failed", "cancelled"]
KpiValue = int | float | str | None

MAX_ITEMS = 20
MAX_STEPS = 50
MAX_ITEM_CHARS = 500
DEFAULT_LIMIT = 100


class Kpi(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    target: KpiValue = None
    current: KpiValue = None
    unit: str | None = Field(None, max_length=40)
    # A skill whose successful runs count toward this KPI (the heartbeat's reflection adds 1).
    skill: str | None = Field(None, max_length=64)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("a KPI needs a name")
        return value


def _goal(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("an objective needs a goal")
    return value


def _items(values: list[str]) -> list[str]:
    items = [" ".join(value.split()) for value in values]
    if any(len(item) > MAX_ITEM_CHARS for item in items):
        raise ValueError(f"each item holds at most {MAX_ITEM_CHARS} characters")
    return [item for item in items if item]


def _unique_kpis(kpis: list[Kpi]) -> list[Kpi]:
    names = [kpi.name.lower() for kpi in kpis]
    if len(set(names)) != len(names):
        raise ValueError("two KPIs share a name")
    return kpis


Goal = Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_goal)]
Items = Annotated[list[str], Field(max_length=MAX_ITEMS), AfterValidator(_items)]
Steps = Annotated[list[str], Field(max_length=MAX_STEPS), AfterValidator(_items)]
Kpis = Annotated[list[Kpi], Field(max_length=MAX_ITEMS), AfterValidator(_unique_kpis)]
Priority = Annotated[int, Field(ge=0, le=100)]


class ObjectiveIn(BaseModel):
    """A new objective: a goal, how much it matters, how to tell it is met, and a plan."""

    model_config = ConfigDict(extra="forbid")

    goal: Goal
    priority: Priority = 50
    success_criteria: Items = Field(default_factory=list)
    kpis: Kpis = Field(default_factory=list)
    plan: Steps = Field(default_factory=list)


class ObjectiveUpdate(BaseModel):
    """Changes to an objective; fields left out keep their value.

    A new ``plan`` keeps the status of steps whose text is unchanged; new ``kpis`` keep the
    current value of a KPI of the same name when they give none.
    """

    model_config = ConfigDict(extra="forbid")

    goal: Goal | None = None
    priority: Priority | None = None
    success_criteria: Items | None = None
    kpis: Kpis | None = None
    plan: Steps | None = None
    note: str | None = Field(None, max_length=MAX_ITEM_CHARS)


class PlanStep(BaseModel):
    step: str
    status: str = "pending"


class Note(BaseModel):
    at: str
    note: str


class Progress(BaseModel):
    plan: list[PlanStep] = Field(default_factory=list)
    cursor: int = 0
    notes: list[Note] = Field(default_factory=list)
    summary: str | None = None


class ObjectiveView(BaseModel):
    objective_id: uuid.UUID
    goal: str
    priority: int
    status: ObjectiveStatus
    success_criteria: list[str]
    kpis: list[Kpi]
    progress: Progress
    percent_done: float
    created_at: dt.datetime
    updated_at: dt.datetime
    completed_at: dt.datetime | None = None


def create(db: Database, tenant_id: uuid.UUID, objective: ObjectiveIn) -> ObjectiveView:
    row = db.one(
        tenant_id,
        "objective_insert",
        goal=objective.goal,
        priority=objective.priority,
        success_criteria=as_json(objective.success_criteria),
        kpis=as_json([kpi.model_dump() for kpi in objective.kpis]),
        progress=new_progress(objective.plan),
        run_id=None,
    )
    assert row is not None
    return _view(row["objective"])


def list_objectives(
    db: Database,
    tenant_id: uuid.UUID,
    status: ObjectiveStatus | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
) -> list[ObjectiveView]:
    """Open objectives first by priority, then paused, then closed ones (newest first)."""
    rows = db.all(tenant_id, "objective_api_list", status=status, limit=max(1, min(limit, 500)))
    return [_view(row["objective"]) for row in rows]


def get(db: Database, tenant_id: uuid.UUID, objective_id: uuid.UUID) -> ObjectiveView:
    row = db.one(tenant_id, "objective_api_get", objective_id=objective_id)
    if row is None:
        raise _not_found(objective_id)
    return _view(row["objective"])


def update(
    db: Database, tenant_id: uuid.UUID, objective_id: uuid.UUID, changes: ObjectiveUpdate
) -> ObjectiveView:
    fields = sorted(changes.model_dump(exclude_none=True))
    with db.transaction(tenant_id) as tx:
        current = tx.one("objective_lock", objective_id=objective_id)
        if current is None:
            raise _not_found(objective_id)
        if current["status"] not in ("open", "paused"):
            raise Conflict(
                f"the objective is already {current['status']}; reopen it as a new objective",
                code="objective_closed",
            )
        kpis = _merge_kpis(current["kpis"], changes.kpis)
        progress: dict[str, Any] | None = None
        if changes.plan is not None or changes.note is not None:
            progress = current["progress"]
            if changes.plan is not None:
                progress = _replan(progress, changes.plan)
            progress, _ = advance(progress, [], note=changes.note)
        row = tx.one(
            "objective_api_update",
            objective_id=objective_id,
            goal=changes.goal,
            priority=changes.priority,
            success_criteria=None
            if changes.success_criteria is None
            else as_json(changes.success_criteria),
            kpis=None if kpis is None else as_json(kpis),
            progress=progress,
            fields=as_json(fields),
        )
    assert row is not None
    return _view(row["objective"])


def pause(db: Database, tenant_id: uuid.UUID, objective_id: uuid.UUID) -> ObjectiveView:
    """Stop the heartbeat working on an open objective (pausing twice is harmless)."""
    return _move(db, tenant_id, objective_id, "open", "paused")


def resume(db: Database, tenant_id: uuid.UUID, objective_id: uuid.UUID) -> ObjectiveView:
    """Hand a paused objective back to the heartbeat (resuming an open one is harmless)."""
    return _move(db, tenant_id, objective_id, "paused", "open")


def complete(
    db: Database, tenant_id: uuid.UUID, objective_id: uuid.UUID, summary: str | None = None
) -> ObjectiveView:
    """Close an open or paused objective as met (completing twice is harmless)."""
    row = db.one(
        tenant_id,
        "objective_transition",
        objective_id=objective_id,
        from_statuses=["open", "paused"],
        to_status="completed",
        summary=(summary or "").strip()[:MAX_ITEM_CHARS] or None,
        run_id=None,
    )
    if row is None:
        raise _not_found(objective_id)
    objective = row["objective"]
    if not row["changed"] and objective["status"] != "completed":
        raise Conflict(f"the objective is already {objective['status']}", code="objective_closed")
    return _view(objective)


def _move(
    db: Database, tenant_id: uuid.UUID, objective_id: uuid.UUID, source: str, target: str
) -> ObjectiveView:
    row = db.one(
        tenant_id,
        "objective_transition",
        objective_id=objective_id,
        from_statuses=[source],
        to_status=target,
        summary=None,
        run_id=None,
    )
    if row is None:
        raise _not_found(objective_id)
    objective = row["objective"]
    if not row["changed"] and objective["status"] != target:
        raise Conflict(
            f"only a {source} objective can be made {target}; this one is {objective['status']}",
            code="objective_closed",
        )
    return _view(objective)


def _replan(progress: dict[str, Any], steps: list[str]) -> dict[str, Any]:
    """The new plan, keeping the status of each step whose text is unchanged."""
    old = [dict(step) for step in progress.get("plan") or []]
    plan = []
    for step in new_progress(steps)["plan"]:
        match = next((s for s in old if s.get("step") == step["step"]), None)
        if match is not None:
            old.remove(match)
            step["status"] = match.get("status", "pending")
        plan.append(step)
    return {**progress, "plan": plan, "cursor": first_unfinished(plan)}


def _merge_kpis(
    current: list[dict[str, Any]], given: list[Kpi] | None
) -> list[dict[str, Any]] | None:
    if given is None:
        return None
    known = {str(kpi.get("name", "")).lower(): kpi for kpi in current}
    merged = []
    for kpi in given:
        value = kpi.model_dump()
        if value["current"] is None:
            value["current"] = known.get(kpi.name.lower(), {}).get("current")
        merged.append(value)
    return merged


def _view(objective: dict[str, Any]) -> ObjectiveView:
    progress = objective.get("progress") or {}
    plan = progress.get("plan") or []
    if plan:
        done = sum(1 for step in plan if step.get("status") in FINISHED)
        percent = round(100 * done / len(plan), 1)
    else:
        percent = 100.0 if objective["status"] == "completed" else 0.0
    return ObjectiveView.model_validate({**objective, "percent_done": percent})


def _not_found(objective_id: uuid.UUID) -> NotFound:
    return NotFound(f"there is no objective {objective_id}", code="objective_not_found")
