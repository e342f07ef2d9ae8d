"""``/automations``: skills run on a schedule or in reaction to events and signals."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response

from flowpilot.api.deps import DB, Caller
from flowpilot.automations.models import Automation, NewAutomation

router = APIRouter(tags=["automations"])


@router.get("/automations", response_model=list[Automation])
def list_automations(caller: Caller, db: DB) -> list[Automation]:
    from flowpilot.automations.store import list_automations

    caller.require("automations")
    return list_automations(db, caller.tenant_id)


@router.post("/automations", response_model=Automation, status_code=201)
def create_automation(body: NewAutomation, caller: Caller, db: DB) -> Automation:
    from flowpilot.automations.store import create_automation

    caller.require("automations")
    return create_automation(db, caller.tenant_id, body)


@router.get("/automations/{automation_id}", response_model=Automation)
def get_automation(automation_id: uuid.UUID, caller: Caller, db: DB) -> Automation:
    from flowpilot.automations.store import get_automation

    caller.require("automations")
    return get_automation(db, caller.tenant_id, automation_id)


@router.post("/automations/{automation_id}/enable", response_model=Automation)
def enable_automation(automation_id: uuid.UUID, caller: Caller, db: DB) -> Automation:
    from flowpilot.automations.store import set_enabled

    caller.require("automations")
    return set_enabled(db, caller.tenant_id, automation_id, True)


@router.post("/automations/{automation_id}/disable", response_model=Automation)
def disable_automation(automation_id: uuid.UUID, caller: Caller, db: DB) -> Automation:
    from flowpilot.automations.store import set_enabled

    caller.require("automations")
    return set_enabled(db, caller.tenant_id, automation_id, False)


@router.delete("/automations/{automation_id}", status_code=204)
def delete_automation(automation_id: uuid.UUID, caller: Caller, db: DB) -> Response:
    from flowpilot.automations.store import delete_automation

    caller.require("automations")
    delete_automation(db, caller.tenant_id, automation_id)
    return Response(status_code=204)
