"""``/model-routing/functions/{name}``: which model answers each function, and its history."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from flowpilot.ai.types import FunctionName
from flowpilot.api.deps import DB, Admin, Caller

router = APIRouter(tags=["model routing"])


class RouteView(BaseModel):
    function: str
    provider: str
    model: str
    tier: str
    source: str
    base_url: str | None = None
    recent_executions: list[dict[str, Any]] = Field(default_factory=list)
    overrides: list[dict[str, Any]] = Field(default_factory=list)


class RouteChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Literal["openai", "heuristic"]
    model: str = Field(min_length=1, max_length=120)
    tier: str | None = Field(None, max_length=40)
    base_url: str | None = Field(None, max_length=500)


@router.get("/model-routing/functions/{function}", response_model=RouteView)
def show_route(function: FunctionName, caller: Caller, db: DB) -> dict[str, Any]:
    from flowpilot.ai.routing import route_details

    return route_details(db, caller.tenant_id, function)


@router.put("/model-routing/functions/{function}", response_model=RouteView)
def change_route(
    function: FunctionName, change: RouteChange, caller: Admin, db: DB
) -> dict[str, Any]:
    from flowpilot.ai.routing import route_details, set_route

    set_route(
        db,
        caller.tenant_id,
        function,
        change.provider,
        change.model,
        change.tier,
        change.base_url,
        caller.subject,
    )
    return route_details(db, caller.tenant_id, function)
