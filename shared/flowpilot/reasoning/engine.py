"""The reasoning engine: one ``run_turn()`` for every trigger, and ``resume()`` after approval.

Perceive (bootstrap + GoalFrame) -> loop, bounded by steps, tokens and wall clock:
Plan (the model picks one offered tool, or answers) -> Act (through the execute transport)
-> Observe (ledger + evidence) -> Critic -> ... -> Answer (quality gate, projection).
The run row is written before anything else. Steps are journalled in memory and written with
the checkpoint that ends the turn (answer, pause, stop or error), which waits for the WAL
flush; each action's own record is execute's audit row, written before the engine goes on.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from flowpilot.ai.types import FunctionName
from flowpilot.db import Database, get_db
from flowpilot.errors import FlowPilotError
from flowpilot.execute.client import ExecuteClient, default_client
from flowpilot.execute.models import Actor, ExecuteRequest, ExecuteResult
from flowpilot.reasoning import critic
from flowpilot.reasoning.answer import FinalAnswer
from flowpilot.reasoning.bootstrap import perceive
from flowpilot.reasoning.endings import (
    TurnResult,
    answer,
    end_with_error,
    pause,
    stop,
)
from flowpilot.reasoning.goal import frame_goal
from flowpilot.reasoning.models import Trigger
from flowpilot.reasoning.observe import journal_act, observe
from flowpilot.reasoning.state import RunState

FUNCTION_FOR_TRIGGER: dict[str, FunctionName] = {
    "chat": "chat",
    "heartbeat": "heartbeat",
    "signal": "signal_planner",
    "peer": "chat",
    "automation": "heartbeat",
    "workflow": "workflow_branch",
}


@dataclass(frozen=True)
class Limits:
    max_steps: int = 6  # tool calls in one run
    max_tokens: int = 40_000
    wall_clock_s: float = 25.0
    max_executions: int | None = None  # the heartbeat allows one skill execution per tick


@dataclass
class _Deps:
    db: Database
    executor: ExecuteClient
    model: Any  # ModelClient
    limits: Limits
    budget: Any  # RunBudget


def run_turn(
    tenant_id: uuid.UUID,
    message: str,
    *,
    actor: Actor,
    trigger: Trigger = "chat",
    thread_id: uuid.UUID | None = None,
    objective_id: uuid.UUID | None = None,
    db: Database | None = None,
    limits: Limits | None = None,
    executor: ExecuteClient | None = None,
    intent: str | None = None,
) -> TurnResult:
    """Run the engine for one request; the run row is created before anything else.

    ``intent`` (default: the message) is what the skill scorer ranks skills for: the
    heartbeat passes the objective's next step rather than its whole instruction."""
    from flowpilot.ai.routing import config_for
    from flowpilot.config import get_settings

    database = db or get_db()
    function = FUNCTION_FOR_TRIGGER[trigger]
    # One round trip: the run row first, then its model route and what it perceives. Its
    # commit does not wait for the WAL flush; the run's later synchronous commits cover it.
    started = database.one(
        tenant_id,
        "run_start",
        durable=False,
        trigger=trigger,
        thread_id=thread_id,
        objective_id=objective_id,
        function_name=function,
    )
    assert started is not None
    config = config_for(function, started["route"], get_settings())
    run = RunState(
        tenant_id=tenant_id,
        run_id=started["run_id"],
        trigger=trigger,
        actor=actor.model_dump(),
        thread_id=thread_id,
        objective_id=objective_id,
        provider=config.provider,
        model=config.model,
    )
    limits = limits or Limits()
    run.limits = asdict(limits)
    try:
        deps = _prepare(
            run,
            database,
            message,
            intent or message,
            started["context"] or {},
            config,
            limits,
            executor,
        )
        return _loop(run, deps)
    except FlowPilotError as exc:
        return end_with_error(run, database, exc)


def resume(
    tenant_id: uuid.UUID,
    run_id: uuid.UUID,
    execution: ExecuteResult | None,
    *,
    db: Database | None = None,
    limits: Limits | None = None,
    executor: ExecuteClient | None = None,
) -> TurnResult | None:
    """Continue a run paused for approval, with the follow-through's result (None: rejected).

    Returns None when the run is not waiting (already resumed, or never paused)."""
    from flowpilot.ai.accounting import RunBudget
    from flowpilot.ai.client import model_client
    from flowpilot.ai.routing import resolve_ai_config

    database = db or get_db()
    row = database.one(tenant_id, "run_claim_resume", run_id=run_id)
    if row is None:
        return None
    run = RunState.from_row(tenant_id, row)
    # The limits the run started with (a heartbeat's one execution) hold after a pause too.
    limits = limits or Limits(**run.limits)
    try:
        config = resolve_ai_config(
            FUNCTION_FOR_TRIGGER[run.trigger], tenant_id=tenant_id, db=database
        )
        deps = _Deps(
            database,
            executor or default_client(database),
            model_client(config),
            limits,
            RunBudget(max(0, limits.max_tokens - run.tokens), None),
        )
        pending = run.ledger.observations[-1] if run.ledger.observations else None
        skill = pending.skill if pending else "the approved action"
        if execution is None:
            result = ExecuteResult.problem("refused", "approval_rejected", "the person declined")
        else:
            result = execution
            journal_act(run, skill, pending.arguments if pending else {}, result, 0)
        run.confirmations = []
        observe(
            run,
            run.pending_call_id or "resumed",
            skill,
            pending.arguments if pending else {},
            result,
        )
        run.pending_call_id = None
        if result.status == "executed":
            run.executions.append(skill)
        return _loop(run, deps)
    except FlowPilotError as exc:
        return end_with_error(run, database, exc)


def _prepare(
    run: RunState,
    db: Database,
    message: str,
    intent: str,
    context: dict[str, Any],
    config: Any,
    limits: Limits,
    executor: ExecuteClient | None,
) -> _Deps:
    from flowpilot.ai.accounting import RunBudget
    from flowpilot.ai.client import model_client

    started = time.perf_counter()
    perception = perceive(db, run.tenant_id, intent, thread_id=run.thread_id, context=context)
    run.goal_frame = frame_goal(
        message,
        trigger=run.trigger,
        offered_skills=[s.name for s in perception.offered],
        constraints=perception.constraints,
    )
    frame = run.goal_frame.render()
    history = [{"role": h["role"], "content": h["content"]} for h in perception.history]
    if history and history[-1]["role"] == "user" and history[-1]["content"] == message:
        history = history[:-1]  # the chat layer already stored this turn's message
    run.messages = [
        {
            "role": "system",
            "content": f"{perception.prompt}\n\n## This run\n{frame}",
        },
        *history[-8:],
        {"role": "user", "content": message},
    ]
    run.tools = perception.tools
    run.step(
        "perceive",
        input={"message": message},
        output={  # the goal frame is on the run itself
            "layers": perception.layers,
            "offered": [s.name for s in perception.offered],
        },
        duration_ms=int((time.perf_counter() - started) * 1000),
    )
    remaining = max(0, perception.daily_budget - perception.tokens_today)
    return _Deps(
        db,
        executor or default_client(db),
        model_client(config),
        limits,
        RunBudget(limits.max_tokens, remaining),
    )


def _can_act(run: RunState, limits: Limits) -> bool:
    return limits.max_executions is None or len(run.executions) < limits.max_executions


def _loop(run: RunState, deps: _Deps) -> TurnResult:
    while True:
        if time.monotonic() - run.started > deps.limits.wall_clock_s:
            return stop(run, deps.db, "wall_clock", "I ran out of time for this request")
        if run.tool_calls >= deps.limits.max_steps:
            return stop(run, deps.db, "step_limit", "I reached the step limit for one request")
        acting = _can_act(run, deps.limits)
        started = time.perf_counter()
        reply = deps.model.complete(
            run.messages,
            tools=run.tools if acting and run.tools else None,
            response_model=FinalAnswer,
            budget=deps.budget,
        )
        _account(run, reply)
        duration = int((time.perf_counter() - started) * 1000)
        if reply.tool_calls and acting:
            call = reply.tool_calls[0]
            run.step(
                "plan",
                skill=call.name,
                output={"tool": call.name, "arguments": call.arguments},
                tokens=reply.usage.total,
                duration_ms=duration,
            )
            run.messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments),
                            },
                        }
                    ],
                }
            )
            run.tool_calls += 1
            outcome = _act(run, deps, call.id, call.name, call.arguments)
            if outcome is not None:
                return outcome
            continue
        run.step("plan", output={"answer": True}, tokens=reply.usage.total, duration_ms=duration)
        final = reply.parsed if isinstance(reply.parsed, FinalAnswer) else None
        if final is None:
            final = FinalAnswer(answer=reply.content or "", main_claim="", limitations=[])
        return answer(run, deps.db, final)


def _account(run: RunState, reply: Any) -> None:
    from flowpilot.ai.accounting import estimate_cost_usd

    run.account(reply, estimate_cost_usd(reply.model, reply.usage))


def _act(
    run: RunState, deps: _Deps, call_id: str, skill: str, arguments: dict[str, Any]
) -> TurnResult | None:
    """Execute one tool call (or refuse one that was not offered); None means keep going."""
    if skill not in run.offered:
        result = ExecuteResult.problem(
            "refused", "not_offered", f"{skill} is not one of the tools offered for this request"
        )
    else:
        started = time.perf_counter()
        result = deps.executor.execute(
            ExecuteRequest(
                tenant_id=run.tenant_id,
                actor=Actor(type="flowpilot", id=f"run:{run.run_id}"),
                skill=skill,
                arguments=arguments,
                run_id=run.run_id,
            )
        )
        journal_act(run, skill, arguments, result, int((time.perf_counter() - started) * 1000))
    if result.status == "pending_approval":
        return pause(run, deps.db, call_id, skill, arguments, result)
    if result.status == "executed":
        run.executions.append(skill)
    observe(run, call_id, skill, arguments, result)
    verdict = critic.assess(run.ledger)
    run.step("critic", skill=skill, output=verdict.to_dict())
    if verdict.decision == "stop_blocked":
        return answer(run, deps.db, None)
    if verdict.decision == "ask_user":
        return answer(run, deps.db, None, question=True)
    if verdict.decision == "narrow":
        run.messages.append({"role": "system", "content": critic.guidance(verdict)})
    return None
