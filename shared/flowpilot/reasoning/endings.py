"""How a run ends: paused for approval, answered, stopped by a limit, or ended by an error.

Each ending writes the answer a person sees (through the quality gate), then checkpoints the
run with its status and posts the answer to its thread, in one round trip.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from flowpilot.db import Database
from flowpilot.errors import BudgetExceeded, FlowPilotError, ModelTimeout
from flowpilot.execute.models import ExecuteResult
from flowpilot.observability import logger
from flowpilot.reasoning.answer import FinalAnswer, from_claims, quality_gate
from flowpilot.reasoning.ledger import UUID_RE, Observation, clean_text, humanize
from flowpilot.reasoning.models import Action, Answer, Artifact, Confirmation
from flowpilot.reasoning.state import RunState


@dataclass
class TurnResult:
    run_id: uuid.UUID
    status: str  # completed | waiting_approval | stopped | failed
    answer: Answer
    provider: str | None
    model: str | None
    tokens: int
    model_calls: int
    stop_reason: str | None = None
    executions: list[str] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # executed skills that changed something


def pause(
    run: RunState,
    db: Database,
    call_id: str,
    skill: str,
    arguments: dict[str, Any],
    result: ExecuteResult,
) -> TurnResult:
    assert result.approval_id is not None
    run.ledger.record(Observation(skill=skill, arguments=arguments, status="pending_approval"))
    run.work_log.append(f"Asked for your approval to {humanize(skill)}")
    run.pending_call_id = call_id
    summary = describe(skill, arguments)
    run.confirmations = [Confirmation(approval_id=result.approval_id, skill=skill, summary=summary)]
    known = run.ledger.claims
    lead = " ".join(known[:3]) + " " if known else ""
    content = f"{lead}I need your approval before I {summary}. Approve it and I will carry on."
    run.answer = projection(run, quality_gate(content, run.ledger))
    run.step("answer", output={"content": run.answer.content, "waiting_for": skill})
    run.checkpoint(db, "waiting_approval", stop_reason="waiting_approval")
    return turn_result(run, "waiting_approval", "waiting_approval")


def describe(skill: str, arguments: dict[str, Any]) -> str:
    """A confirmation's words: the action and up to three plain details, never an id."""
    shown = [
        f"{humanize(key)} {clean_text(str(value), 80)}"
        for key, value in arguments.items()
        if not key.endswith("_id")
        and isinstance(value, str | int | float)
        and value not in ("", None)
        and not UUID_RE.fullmatch(str(value).strip())
    ][:3]
    details = f" ({', '.join(shown)})" if shown else ""
    return f"{humanize(skill)}{details}"


def answer(
    run: RunState, db: Database, final: FinalAnswer | None, *, question: bool = False
) -> TurnResult:
    if final is not None and final.answer.strip():
        content = quality_gate(final.answer, run.ledger, final.limitations)
    else:
        content = quality_gate(from_claims(run.ledger), run.ledger)
    if question:
        content += "\n\nCould you give me the missing details so I can try again?"
    run.answer = projection(run, content)
    run.step("answer", output={"content": content})
    run.checkpoint(db, "completed", stop_reason="answered")
    return turn_result(run, "completed", "answered")


def stop(run: RunState, db: Database, reason: str, why: str) -> TurnResult:
    known = from_claims(run.ledger) if run.ledger.observations else ""
    content = f"{why}, so I stopped here." + (f" What I found so far: {known}" if known else "")
    run.answer = projection(run, quality_gate(content, run.ledger))
    run.step("answer", output={"content": run.answer.content, "stopped": reason})
    run.checkpoint(db, "stopped", stop_reason=reason)
    return turn_result(run, "stopped", reason)


CUSTOMER_ERRORS = {
    "model_timeout": "the AI model did not answer in time",
    "invalid_output": "the AI model's reply could not be understood",
    "run_budget_exceeded": "this request used up its allowance of AI work",
    "daily_budget_exceeded": "today's AI budget for this workspace is spent",
}


def end_with_error(run: RunState, db: Database, exc: FlowPilotError) -> TurnResult:
    """Finish a run cleanly after an error: a clear reason, nothing half-written."""
    status = "stopped" if isinstance(exc, BudgetExceeded) else "failed"
    reason = CUSTOMER_ERRORS.get(exc.code)
    if reason is None and isinstance(exc, ModelTimeout):
        reason = CUSTOMER_ERRORS["model_timeout"]
    if reason is None:
        reason = exc.message if isinstance(exc, BudgetExceeded) else "of a problem on my side"
    done = f" Before that: {'; '.join(run.work_log)}." if run.work_log else " Nothing was changed."
    content = f"I could not finish this because {reason}.{done}"
    run.answer = projection(run, quality_gate(content, run.ledger))
    run.step("answer", output={"content": run.answer.content, "error": exc.code})
    logger.warning("run ended early", run_id=str(run.run_id), code=exc.code, status=status)
    try:
        run.checkpoint(db, status, stop_reason=exc.code, error=exc.to_dict())
    except FlowPilotError:
        logger.exception("could not record the end of a run", run_id=str(run.run_id))
    return turn_result(run, status, exc.code)


def projection(run: RunState, content: str) -> Answer:
    actions = [
        Action(
            label=f"{label}: {c.summary}", method="POST", path=f"/approvals/{c.approval_id}/{verb}"
        )
        for c in run.confirmations
        for label, verb in (("Approve", "approve"), ("Decline", "reject"))
    ]
    # What the run made or changed (reads are in the work log, not artifacts).
    artifacts = [
        Artifact(kind=o.skill, title=humanize(o.skill).capitalize(), content={"claims": o.claims})
        for o in run.ledger.observations
        if o.status == "executed" and o.skill in run.write_skills and o.claims
    ]
    return Answer(
        content=content,
        work_log=list(run.work_log),
        artifacts=artifacts,
        actions=actions,
        confirmations=list(run.confirmations),
    )


def turn_result(run: RunState, status: str, reason: str | None) -> TurnResult:
    assert run.answer is not None
    return TurnResult(
        run_id=run.run_id,
        status=status,
        answer=run.answer,
        provider=run.provider,
        model=run.model,
        tokens=run.tokens,
        model_calls=run.model_calls,
        stop_reason=reason,
        executions=list(run.executions),
        observations=run.ledger.to_list(),
        writes=[skill for skill in run.executions if skill in run.write_skills],
    )
