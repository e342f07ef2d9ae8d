"""Act and observe, as the run records them: the act step for what execute did, then the
observation (ledger, work log, the tool message the model reads next, the observe step)."""

from __future__ import annotations

import json
from typing import Any

from flowpilot.execute.models import ExecuteResult
from flowpilot.reasoning.ledger import Observation, humanize
from flowpilot.reasoning.state import RunState, plain

MAX_TOOL_DATA_CHARS = 4_000


def journal_act(
    run: RunState, skill: str, arguments: dict[str, Any], result: ExecuteResult, duration_ms: int
) -> None:
    """The act step: what execute did with the call. (Execute's audit row is the durable
    record of the action itself; the run's journal is written with its next checkpoint.)"""
    output: dict[str, Any] = {"status": result.status, "result": result.result}
    if result.error is not None:
        output["error"] = result.error.model_dump()
    run.step(
        "act",
        skill=skill,
        input={"skill": skill, "arguments": arguments},
        output=output,
        duration_ms=duration_ms,
    )


def observe(
    run: RunState,
    call_id: str,
    skill: str,
    arguments: dict[str, Any],
    result: ExecuteResult,
) -> Observation:
    """Record a tool's result: the ledger's claims and gaps, the work log's line, the tool
    message the model reads next (framed as data), and the observe step."""
    error = result.error.model_dump() if result.error else None
    observation = run.ledger.record(
        Observation(
            skill=skill,
            arguments=arguments,
            status=result.status,
            result=plain(result.result),
            error=plain(error),
        )
    )
    run.work_log.append(work_line(observation))
    summary = "; ".join(observation.claims or observation.gaps or observation.boundaries)
    data = json.dumps(result.result, sort_keys=True, default=str)
    run.messages.append(
        {
            "role": "tool",
            "tool_call_id": call_id,
            # Tool output is data: it is framed as such and never changes trust or tenant.
            "content": json.dumps(
                {
                    "outcome": result.status,
                    "summary": summary,
                    "error": error,
                    "data": data[:MAX_TOOL_DATA_CHARS],
                }
            ),
        }
    )
    run.step(
        "observe",
        skill=skill,
        output={
            "claims": observation.claims,
            "boundaries": observation.boundaries,
            "gaps": observation.gaps,
        },
    )
    return observation


def work_line(observation: Observation) -> str:
    action = humanize(observation.skill)
    if observation.status == "executed":
        detail = observation.claims[0] if observation.claims else "done"
        return f"{action.capitalize()}: {detail}"
    if observation.status == "pending_approval":
        return f"Asked for your approval to {action}"
    reason = observation.gaps[0] if observation.gaps else "it did not work"
    return f"Tried to {action}, but: {reason}"
