"""Running a tenant's due automations: claim each occurrence once, run it, record the outcome.

A scheduled occurrence is claimed by one conditional UPDATE that moves ``next_run_at`` to
the next time; an event or signal trigger by one that moves ``last_run_at`` past the rows it
reacts to. Whoever loses a claim runs nothing, so concurrent heartbeats never run the same
occurrence twice; the execute idempotency key guards a retried execution on top of that.

``platform`` automations go straight to agent-execute. ``flowpilot`` automations go through
the reasoning engine (one execution at most), unless the FlowPilot module is off: then they
run on the platform when their arguments are complete, and are skipped when they are not.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from flowpilot.automations.cron import parse_schedule
from flowpilot.db import Database
from flowpilot.errors import FlowPilotError
from flowpilot.execute.client import ExecuteClient, default_client
from flowpilot.execute.models import Actor, ExecuteRequest, ExecuteResult
from flowpilot.observability import logger

Outcome = Literal["executed", "pending_approval", "refused", "invalid", "failed", "skipped"]

MAX_AUTOMATIONS_PER_PASS = 50
MAX_OCCURRENCES_PER_TRIGGER = 20  # events one automation reacts to in one pass
MODULE_OFF = "the FlowPilot module is off and this automation needs it"


@dataclass
class AutomationRun:
    """What one occurrence of an automation did."""

    automation_id: uuid.UUID
    name: str
    skill: str
    executor_used: Literal["flowpilot", "platform"] | None  # None: nothing ran
    outcome: Outcome
    reason: str | None = None
    occurrence: str | None = None  # the scheduled time, or "event:<id>" / "signal:<id>"
    approval_id: uuid.UUID | None = None
    run_id: uuid.UUID | None = None

    @property
    def last_outcome(self) -> str:
        return f"{self.outcome}: {self.reason}" if self.reason else self.outcome


def run_due(
    db: Database,
    tenant_id: uuid.UUID,
    *,
    module_enabled: bool,
    executor: ExecuteClient | None = None,
    now: dt.datetime | None = None,
) -> list[AutomationRun]:
    """Run every due occurrence of the tenant's automations; one that fails is logged and
    recorded as failed, and the next one still runs."""
    client = executor or default_client(db)
    runs: list[AutomationRun] = []
    for row in db.all(tenant_id, "automations_due", now=now, limit=MAX_AUTOMATIONS_PER_PASS):
        try:
            occurrences = _claim(db, tenant_id, row)
        except Exception as exc:
            logger.exception(
                "could not claim an automation", automation_id=str(row["automation_id"])
            )
            runs.append(_failed(db, tenant_id, row, None, exc))
            continue
        for occurrence in occurrences:
            try:
                run = _run(db, tenant_id, row, occurrence, client, module_enabled)
            except Exception as exc:
                logger.exception("automation run failed", automation_id=str(row["automation_id"]))
                runs.append(_failed(db, tenant_id, row, occurrence, exc))
                continue
            _record(db, tenant_id, run)
            runs.append(run)
    return runs


# --- claiming ------------------------------------------------------------------------------


class _InvalidSchedule(Exception):
    """A stored schedule that no longer parses (written around the store's validation)."""


def _claim(db: Database, tenant_id: uuid.UUID, row: dict[str, Any]) -> list[str]:
    """The occurrences this caller won: a scheduled time, or the events/signals it reacts to."""
    now: dt.datetime = row["now"]
    if row["trigger_kind"] != "cron":
        claimed = db.all(
            tenant_id,
            "automation_claim_trigger",
            automation_id=row["automation_id"],
            last_run_at=row["last_run_at"],
            now=now,
            batch=MAX_OCCURRENCES_PER_TRIGGER,
        )
        return [str(c["source"]) for c in claimed]
    occurrence: dt.datetime = row["next_run_at"]
    try:
        schedule = parse_schedule(row["trigger_spec"])
        next_run_at: dt.datetime | None = schedule.next_after(max(now, occurrence))
    except FlowPilotError as exc:
        next_run_at = None  # stop it: retrying a broken schedule every tick helps nobody
        problem: Exception | None = _InvalidSchedule(exc.message)
    else:
        problem = None
    won = db.one(
        tenant_id,
        "automation_claim_schedule",
        automation_id=row["automation_id"],
        occurrence=occurrence,
        next_run_at=next_run_at,
        now=now,
    )
    if won is None:
        return []
    if problem is not None:
        raise problem
    return [occurrence.isoformat()]


# --- running -------------------------------------------------------------------------------


def _run(
    db: Database,
    tenant_id: uuid.UUID,
    row: dict[str, Any],
    occurrence: str,
    client: ExecuteClient,
    module_enabled: bool,
) -> AutomationRun:
    if row["executor"] == "flowpilot" and module_enabled:
        return _through_engine(db, tenant_id, row, occurrence, client)
    result = client.execute(
        ExecuteRequest(
            tenant_id=tenant_id,
            actor=Actor(type="automation", id=row["name"]),
            skill=row["skill"],
            arguments=row["arguments"],
            idempotency_key=f"automation:{row['automation_id']}:{occurrence}",
        )
    )
    if row["executor"] == "flowpilot" and result.status == "invalid":
        # The engine would have filled in the missing arguments; without it we cannot.
        return _outcome(row, occurrence, None, "skipped", MODULE_OFF)
    return _from_execution(row, occurrence, result)


def _from_execution(row: dict[str, Any], occurrence: str, result: ExecuteResult) -> AutomationRun:
    reason = result.error.message if result.error else None
    run = _outcome(row, occurrence, "platform", result.status, reason)
    run.approval_id = result.approval_id
    return run


def _through_engine(
    db: Database,
    tenant_id: uuid.UUID,
    row: dict[str, Any],
    occurrence: str,
    client: ExecuteClient,
) -> AutomationRun:
    from flowpilot.reasoning.engine import Limits, run_turn

    turn = run_turn(
        tenant_id,
        f"Automation '{row['name']}': run {row['skill']} with {_words(row['arguments'])}",
        actor=Actor(type="automation", id=row["name"]),
        trigger="automation",
        # Rank skills for the named skill itself, so its own metadata puts it first.
        intent=str(row["skill"]).replace("_", " "),
        db=db,
        limits=Limits(max_executions=1),
        executor=client,
    )
    outcome: Outcome
    reason: str | None = None
    last = turn.observations[-1] if turn.observations else None
    if turn.status == "waiting_approval":
        outcome = "pending_approval"
        asked = [c.skill for c in turn.answer.confirmations if c.skill != row["skill"]]
        reason = f"FlowPilot asked to run {asked[0]} instead" if asked else None
    elif row["skill"] in turn.executions:
        outcome = "executed"
    elif last is not None and last.get("status") in {"refused", "invalid", "failed"}:
        outcome = last["status"]
        reason = (last.get("error") or {}).get("message") or _first(last.get("gaps"))
    elif turn.status == "failed":
        outcome, reason = "failed", turn.stop_reason or "the run failed"
    else:
        ran = f" (it ran {', '.join(turn.executions)})" if turn.executions else ""
        outcome, reason = "failed", f"FlowPilot finished without running {row['skill']}{ran}"
    run = _outcome(row, occurrence, "flowpilot", outcome, reason)
    run.run_id = turn.run_id
    if turn.answer.confirmations:
        run.approval_id = turn.answer.confirmations[0].approval_id
    return run


def _words(arguments: dict[str, Any]) -> str:
    """Arguments as plain words for the engine: ``to alex@example.com, subject Hello``."""
    shown = [f"{key.replace('_', ' ')} {value}" for key, value in arguments.items()]
    return ", ".join(shown) if shown else "no arguments"


def _first(items: Any) -> str | None:
    return str(items[0]) if isinstance(items, list) and items else None


def _outcome(
    row: dict[str, Any],
    occurrence: str | None,
    executor_used: Literal["flowpilot", "platform"] | None,
    outcome: Outcome,
    reason: str | None,
) -> AutomationRun:
    return AutomationRun(
        automation_id=row["automation_id"],
        name=row["name"],
        skill=row["skill"],
        executor_used=executor_used,
        outcome=outcome,
        reason=reason,
        occurrence=occurrence,
    )


def _failed(
    db: Database,
    tenant_id: uuid.UUID,
    row: dict[str, Any],
    occurrence: str | None,
    exc: Exception,
) -> AutomationRun:
    if isinstance(exc, _InvalidSchedule):
        reason = f"its schedule is invalid ({exc}), so it was stopped"
    elif isinstance(exc, FlowPilotError):
        reason = exc.message
    else:
        reason = "an unexpected error"
    run = _outcome(row, occurrence, None, "failed", reason)
    _record(db, tenant_id, run)
    return run


# --- recording -----------------------------------------------------------------------------


def _summary(run: AutomationRun) -> str:
    who, skill = f"Automation '{run.name}'", run.skill.replace("_", " ")
    because = f": {run.reason}" if run.reason else ""
    if run.outcome == "executed":
        return f"{who} ran {skill}."
    if run.outcome == "pending_approval":
        return f"{who} asked for approval to {skill}."
    if run.outcome == "skipped":
        return f"{who} was skipped{because}."
    if run.outcome == "invalid":
        return f"{who} could not run {skill}, its arguments do not fit{because}."
    if run.outcome == "refused":
        return f"{who} was not allowed to run {skill}{because}."
    return f"{who} tried to run {skill}, but it failed{because}."


def _record(db: Database, tenant_id: uuid.UUID, run: AutomationRun) -> None:
    """The automation's last outcome and an ``automation_run`` event; never raises."""
    payload = {
        "automation_id": str(run.automation_id),
        "name": run.name,
        "skill": run.skill,
        "executor": run.executor_used,
        "outcome": run.outcome,
        "reason": run.reason,
        "occurrence": run.occurrence,
        "approval_id": str(run.approval_id) if run.approval_id else None,
    }
    try:
        db.one(
            tenant_id,
            "automation_record_run",
            automation_id=run.automation_id,
            outcome=run.last_outcome[:500],
            summary=_summary(run)[:1000],
            payload=payload,
            run_id=run.run_id,
        )
    except Exception:
        logger.exception("could not record an automation run", automation_id=str(run.automation_id))
    logger.info(
        "automation run",
        automation_id=payload["automation_id"],
        automation=run.name,
        skill=run.skill,
        executor=run.executor_used,
        outcome=run.outcome,
        reason=run.reason,
        run_id=str(run.run_id) if run.run_id else None,
    )
