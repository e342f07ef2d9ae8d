"""One heartbeat tick for one tenant, in seven steps.

wake -> lease (one conditional upsert; an overlapping tick returns ``busy`` at once) ->
guards (module, daily budget, failure back-off) -> pre-passes (approved operations, stale
approvals, paused runs, due automations, the outbox) -> idle short-circuit (nothing pending:
no model call at all) -> advance the highest-priority objective by at most one skill
execution through the engine -> reflect and update progress -> release and log the tick.
"""

from __future__ import annotations

import datetime as dt
import secrets
import time
import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.errors import FlowPilotError
from flowpilot.execute.client import ExecuteClient
from flowpilot.heartbeat.models import Outcome, TickReport
from flowpilot.heartbeat.prepasses import run_prepasses
from flowpilot.heartbeat.reflection import Reflection, progress_only, reflect
from flowpilot.observability import logger

LEASE_TTL_S = 240
OBJECTIVE_LOCK_S = 180
BACKOFF_AFTER_FAILURES = 3
BACKOFF_BASE = dt.timedelta(minutes=5)
BACKOFF_MAX = dt.timedelta(hours=6)
PENDING_KEYS = (
    "open_objectives",
    "due_automations",
    "approved_approvals",
    "stale_approvals",
    "resumable_runs",
    "unpublished_outbox",
)


def tick(
    db: Database, tenant_id: uuid.UUID, *, executor: ExecuteClient | None = None
) -> TickReport:
    started = time.perf_counter()
    holder = secrets.token_hex(8)
    state = db.one(
        None, "heartbeat_begin", tenant=tenant_id, holder=holder, ttl_seconds=LEASE_TTL_S
    )
    if state is None or not state["claimed"]:
        return TickReport(tenant_id, "busy", reason="another tick holds the lease")
    work = _Work(db, tenant_id, executor)
    try:
        report = work.run(state)
    except Exception as exc:  # a tick never dies without logging and releasing its lease
        logger.exception("heartbeat tick failed", tenant_id=str(tenant_id))
        message = exc.message if isinstance(exc, FlowPilotError) else type(exc).__name__
        report = TickReport(tenant_id, "failed", reason=f"the tick failed: {message}")
    report.duration_ms = int((time.perf_counter() - started) * 1000)
    _finish(db, tenant_id, holder, report, work)
    logger.info("heartbeat tick", **report.to_dict())
    return report


class _Work:
    def __init__(self, db: Database, tenant_id: uuid.UUID, executor: ExecuteClient | None):
        self.db = db
        self.tenant_id = tenant_id
        self.executor = executor
        self.objective: dict[str, Any] | None = None
        self.reflection: Reflection | None = None
        self.run_id: uuid.UUID | None = None

    def run(self, state: dict[str, Any]) -> TickReport:
        tenant = self.tenant_id
        guard = _guards(state)
        if guard is not None:
            if not state["module_enabled"] and state["due_automations"]:
                # With the module off, automations still run, on the platform executor.
                done = run_prepasses(
                    self.db, tenant, {"due_automations": 1}, self.executor, module_enabled=False
                )
                guard += f"; {done.summary() or 'no automation could run'}"
            return TickReport(tenant, "skipped", reason=guard)
        pending = {key: state[key] for key in PENDING_KEYS if state[key]}
        if not pending:
            return TickReport(tenant, "idle", reason="nothing pending")
        done = run_prepasses(self.db, tenant, pending, self.executor)
        if not state["open_objectives"]:
            outcome: Outcome = "executed" if done.executions else "idle"
            return TickReport(tenant, outcome, prepasses=done.counts, reason=done.summary())
        report = self.advance()
        report.prepasses = done.counts
        if report.outcome == "idle" and done.executions:
            report.outcome = "executed"
        return report

    def advance(self) -> TickReport:
        """Advance the highest-priority free objective by at most one skill execution."""
        from flowpilot.execute.models import Actor
        from flowpilot.reasoning.engine import Limits, run_turn

        tenant = self.tenant_id
        self.objective = self.db.one(
            tenant, "heartbeat_objective_claim", lock=uuid.uuid4(), ttl_seconds=OBJECTIVE_LOCK_S
        )
        if self.objective is None:
            return TickReport(tenant, "idle", reason="every open objective is busy or waiting")
        objective_id = self.objective["objective_id"]
        turn = run_turn(
            tenant,
            instruction(self.objective),
            intent=next_step(self.objective) or self.objective["goal"],
            actor=Actor(type="flowpilot", id="heartbeat"),
            trigger="heartbeat",
            objective_id=objective_id,
            db=self.db,
            executor=self.executor,
            limits=Limits(max_steps=3, max_executions=1, wall_clock_s=60.0),
        )
        self.run_id = turn.run_id
        # The skill may have changed the objective itself: progress builds on the row as it
        # is now, not as it was when the tick claimed it.
        current = self.db.one(tenant, "heartbeat_objective_get", objective_id=objective_id)
        self.objective = current or self.objective
        skill = turn.executions[0] if turn.executions else _attempted(turn.observations)
        observation = reflectable(turn.observations, turn.writes)
        if observation is not None:
            self.reflection = reflect(observation, self.objective)
        elif turn.executions:  # a read did the step: move the plan on, no critique owed
            done = [o for o in turn.observations if o["status"] == "executed"]
            self.reflection = progress_only(done[-1], self.objective)
        by_status: dict[str, Outcome] = {
            "waiting_approval": "waiting_approval",
            "failed": "failed",
            "stopped": "skipped",
        }
        outcome = by_status.get(turn.status, "executed" if turn.executions else "idle")
        return TickReport(
            tenant,
            outcome,
            model_calls=turn.model_calls,
            tokens=turn.tokens,
            objective_id=objective_id,
            skill=skill,
            reason=turn.answer.content[:300] if outcome != "executed" else None,
        )


def next_step(objective: dict[str, Any]) -> str | None:
    plan = (objective.get("progress") or {}).get("plan") or []
    return next((s["step"] for s in plan if s.get("status") not in ("done", "skipped")), None)


def instruction(objective: dict[str, Any]) -> str:
    """The objective as the engine's request: the next step first (it is what gets done),
    then the goal it serves and what success means."""
    step = next_step(objective)
    criteria = "; ".join(str(c) for c in objective.get("success_criteria") or [])
    text = f"{step}. " if step else ""
    text += f"This is for the objective: {objective['goal']}."
    if criteria:
        text += f" Success means: {criteria}."
    return text + " Take at most one action that moves it forward, or say no action is needed."


def reflectable(observations: list[dict[str, Any]], writes: list[str]) -> dict[str, Any] | None:
    """The observation reflection is owed for: a write skill that ran (or one that failed)."""
    for observation in reversed(observations):
        if observation["status"] == "executed" and observation["skill"] in writes:
            return observation
        if observation["status"] == "failed":
            return observation
    return None


def _attempted(observations: list[dict[str, Any]]) -> str | None:
    return observations[-1]["skill"] if observations else None


def _guards(state: dict[str, Any]) -> str | None:
    if not state["module_enabled"]:
        return "the FlowPilot module is disabled for this tenant"
    budget = state["daily_token_budget"] or 0
    if state["tokens_today"] >= budget:
        return f"today's token budget is spent ({state['tokens_today']:,} of {budget:,})"
    failures = state["recent_failures"] or 0
    if failures >= BACKOFF_AFTER_FAILURES and state["last_failure_at"] is not None:
        wait = min(BACKOFF_BASE * 2 ** (failures - BACKOFF_AFTER_FAILURES), BACKOFF_MAX)
        resume_at = state["last_failure_at"] + wait
        if dt.datetime.now(dt.UTC) < resume_at:
            return (
                f"backing off after {failures} failed ticks in 48 hours; "
                f"next try after {resume_at:%H:%M} UTC"
            )
    return None


def _finish(
    db: Database, tenant_id: uuid.UUID, holder: str, report: TickReport, work: _Work
) -> None:
    """Log the tick and release the lease (with the reflection and progress): one round trip."""
    reflection = work.reflection
    objective_id = work.objective["objective_id"] if work.objective else report.objective_id
    try:
        db.one(
            None,
            "heartbeat_finish",
            tenant=tenant_id,
            holder=holder,
            outcome=report.outcome,
            objective_id=objective_id,
            skill=report.skill,
            model_calls=report.model_calls,
            tokens=report.tokens,
            duration_ms=report.duration_ms,
            reason=report.reason,
            run_id=work.run_id,
            outcome_reflection=reflection.outcome if reflection else None,
            critique=reflection.critique if reflection else None,
            lesson=reflection.lesson if reflection else None,
            lesson_key=reflection.lesson_key if reflection else None,
            progress=reflection.progress if reflection else None,
            kpis=_json_list(reflection.kpis if reflection else None),
            objective_status=reflection.objective_status if reflection else None,
        )
    except FlowPilotError:
        logger.exception("could not record a heartbeat tick", tenant_id=str(tenant_id))


def _json_list(value: list[dict[str, Any]] | None) -> Any:
    from flowpilot.db import as_json

    return as_json(value) if value is not None else None
