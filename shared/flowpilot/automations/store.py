"""Creating and managing a tenant's automations (the runner lives in ``runner``)."""

from __future__ import annotations

import datetime as dt
import uuid

from flowpilot.automations.cron import next_after
from flowpilot.automations.models import Automation, NewAutomation
from flowpilot.db import Database
from flowpilot.errors import Conflict, InvalidRequest, NotFound


def create_automation(
    db: Database, tenant_id: uuid.UUID, new: NewAutomation, *, now: dt.datetime | None = None
) -> Automation:
    """Validate and store a new automation; a schedule gets its first run time at once.

    InvalidRequest for an unknown skill, a bad schedule (``invalid_schedule``) or, for the
    ``platform`` executor, arguments that do not fit the skill; Conflict for a taken name."""
    next_run_at = None
    if new.trigger_kind == "cron":
        next_run_at = next_after(new.trigger_spec, now or _utcnow())
    skill = db.one(tenant_id, "skill_get", name=new.skill)
    if skill is None:
        raise InvalidRequest(
            f"there is no skill named {new.skill!r} for this workspace", code="unknown_skill"
        )
    if new.executor == "platform":
        # The platform runs the skill exactly as written, so the arguments must be complete.
        from flowpilot.execute.service import argument_problems

        problems = argument_problems(skill, new.arguments)
        if problems:
            first = f"{problems[0]['field']}: {problems[0]['problem']}"
            raise InvalidRequest(
                f"the arguments do not fit {new.skill!r} ({first}); complete them, or let "
                "FlowPilot fill them in with executor 'flowpilot'",
                code="invalid_arguments",
                details=problems,
            )
    row = db.one(
        tenant_id,
        "automation_insert",
        name=new.name,
        trigger_kind=new.trigger_kind,
        trigger_spec=new.trigger_spec,
        skill=new.skill,
        arguments=new.arguments,
        executor=new.executor,
        next_run_at=next_run_at,
    )
    if row is None:
        raise Conflict(f"an automation named {new.name!r} already exists", code="automation_exists")
    return Automation.model_validate(row)


def list_automations(db: Database, tenant_id: uuid.UUID) -> list[Automation]:
    return [Automation.model_validate(row) for row in db.all(tenant_id, "automation_list")]


def get_automation(db: Database, tenant_id: uuid.UUID, automation_id: uuid.UUID) -> Automation:
    row = db.one(tenant_id, "automation_get", automation_id=automation_id)
    if row is None:
        raise _not_found(automation_id)
    return Automation.model_validate(row)


def set_enabled(
    db: Database,
    tenant_id: uuid.UUID,
    automation_id: uuid.UUID,
    enabled: bool,
    *,
    now: dt.datetime | None = None,
) -> Automation:
    """Switch an automation on or off. Switched back on, it does not catch up on what it
    missed: a schedule resumes from its next time, a trigger from the next matching event."""
    current = get_automation(db, tenant_id, automation_id)
    next_run_at = None
    if enabled and current.trigger_kind == "cron":
        next_run_at = next_after(current.trigger_spec, now or _utcnow())
    row = db.one(
        tenant_id,
        "automation_set_enabled",
        automation_id=automation_id,
        enabled=enabled,
        next_run_at=next_run_at,
    )
    if row is None:  # deleted in between
        raise _not_found(automation_id)
    return Automation.model_validate(row)


def delete_automation(db: Database, tenant_id: uuid.UUID, automation_id: uuid.UUID) -> None:
    if db.one(tenant_id, "automation_delete", automation_id=automation_id) is None:
        raise _not_found(automation_id)


def _not_found(automation_id: uuid.UUID) -> NotFound:
    return NotFound(f"no automation {automation_id}", code="automation_not_found")


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
