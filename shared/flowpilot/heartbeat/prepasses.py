"""The tick's pre-passes, each run only when the tick's first query said it has work:
approved operations followed through, stale approvals expired, paused runs resumed (or
interrupted ones closed), due automations run, unpublished outbox rows relayed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from flowpilot.db import Database, as_json
from flowpilot.execute.client import ExecuteClient
from flowpilot.execute.models import ExecuteResult
from flowpilot.heartbeat.reflection import reflect
from flowpilot.observability import logger


@dataclass
class Prepasses:
    counts: dict[str, int] = field(default_factory=dict)
    executions: int = 0

    def summary(self) -> str | None:
        done = [f"{n} {name.replace('_', ' ')}" for name, n in self.counts.items() if n]
        return "pre-passes: " + ", ".join(done) if done else None


def run_prepasses(
    db: Database,
    tenant_id: uuid.UUID,
    pending: dict[str, int],
    executor: ExecuteClient | None,
    *,
    module_enabled: bool = True,
) -> Prepasses:
    done = Prepasses()
    if pending.get("stale_approvals"):
        done.counts["approvals_expired"] = len(db.all(tenant_id, "approvals_expire"))
        done.counts["approvals_interrupted"] = len(db.all(tenant_id, "heartbeat_unstick_approvals"))
    if pending.get("approved_approvals"):
        _follow_through_approved(db, tenant_id, executor, done)
    settled = done.counts.get("approvals_expired") or done.counts.get("approvals_interrupted")
    if pending.get("resumable_runs") or settled:  # an approval just settled frees its run too
        _resume_runs(db, tenant_id, executor, done)
    if pending.get("due_automations"):
        _run_automations(db, tenant_id, executor, done, module_enabled)
    if pending.get("unpublished_outbox"):
        from flowpilot.signals.queue import relay_outbox

        done.counts["outbox_relayed"] = relay_outbox(db, min_age_s=30)
    return done


def _follow_through_approved(
    db: Database, tenant_id: uuid.UUID, executor: ExecuteClient | None, done: Prepasses
) -> None:
    from flowpilot.execute.followthrough import follow_through
    from flowpilot.reasoning.engine import resume

    for approval in db.all(tenant_id, "heartbeat_approved_operations"):
        execution = follow_through(db, tenant_id, approval, executor)
        done.counts["approvals_followed_through"] = (
            done.counts.get("approvals_followed_through", 0) + 1
        )
        if execution.status == "executed":
            done.executions += 1
        if approval["run_id"] is not None:
            turn = resume(tenant_id, approval["run_id"], execution, db=db, executor=executor)
            if turn is not None:
                _reflect_on_followthrough(db, tenant_id, approval, execution, turn.run_id)


def _reflect_on_followthrough(
    db: Database,
    tenant_id: uuid.UUID,
    approval: dict[str, Any],
    execution: ExecuteResult,
    run_id: uuid.UUID,
) -> None:
    """An approved write ran: reflection is owed, as after any write in a tick."""
    run = db.one(tenant_id, "run_get", run_id=run_id)
    objective = None
    if run is not None and run["objective_id"] is not None:
        objective = db.one(tenant_id, "heartbeat_objective_get", objective_id=run["objective_id"])
    observation = next(
        (
            o
            for o in reversed((run or {}).get("state", {}).get("ledger") or [])
            if o["skill"] == approval["skill"] and o["status"] != "pending_approval"
        ),
        {
            "skill": approval["skill"],
            "status": execution.status,
            "claims": [],
            "error": execution.error.model_dump() if execution.error else None,
        },
    )
    reflection = reflect(observation, objective)
    db.one(
        tenant_id,
        "reflection_apply",
        run_id=run_id,
        objective_id=objective["objective_id"] if objective else None,
        skill=reflection.skill,
        outcome=reflection.outcome,
        critique=reflection.critique,
        lesson=reflection.lesson,
        lesson_key=reflection.lesson_key,
        progress=reflection.progress,
        kpis=as_json(reflection.kpis) if reflection.kpis is not None else None,
        objective_status=reflection.objective_status,
    )


def _resume_runs(
    db: Database, tenant_id: uuid.UUID, executor: ExecuteClient | None, done: Prepasses
) -> None:
    from flowpilot.reasoning.engine import resume

    done.counts["runs_interrupted"] = len(db.all(tenant_id, "heartbeat_fail_interrupted_runs"))
    resumed = 0
    for row in db.all(tenant_id, "heartbeat_resumable_runs"):
        execution = None
        if row["approval_status"] in ("executed", "failed") and row["result"]:
            execution = ExecuteResult.model_validate(row["result"])
        if resume(tenant_id, row["run_id"], execution, db=db, executor=executor) is not None:
            resumed += 1
    done.counts["runs_resumed"] = resumed


def _run_automations(
    db: Database,
    tenant_id: uuid.UUID,
    executor: ExecuteClient | None,
    done: Prepasses,
    module_enabled: bool,
) -> None:
    from flowpilot.automations.runner import run_due

    try:
        runs = run_due(db, tenant_id, module_enabled=module_enabled, executor=executor)
    except Exception:  # one broken automation must not stop the tick
        logger.exception("automations pre-pass failed", tenant_id=str(tenant_id))
        return
    done.counts["automations_run"] = len(runs)
    done.executions += sum(1 for r in runs if r.outcome == "executed")
