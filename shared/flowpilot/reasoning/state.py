"""One run in progress: its conversation, ledger, pending steps and counters, persisted as
``agent_runs.state`` so a paused run can be resumed by another process."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from flowpilot.ai.types import ModelReply
from flowpilot.db import Database
from flowpilot.reasoning.goal import GoalFrame
from flowpilot.reasoning.ledger import Ledger
from flowpilot.reasoning.models import Answer, Confirmation


def plain(value: Any) -> Any:
    """A JSON-safe copy: UUIDs, datetimes and anything else unknown become strings."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=str)


@dataclass
class RunState:
    tenant_id: uuid.UUID
    run_id: uuid.UUID
    trigger: str
    actor: dict[str, str]
    thread_id: uuid.UUID | None = None
    objective_id: uuid.UUID | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    ledger: Ledger = field(default_factory=Ledger)
    goal_frame: GoalFrame | None = None
    work_log: list[str] = field(default_factory=list)
    confirmations: list[Confirmation] = field(default_factory=list)
    executions: list[str] = field(default_factory=list)
    tool_calls: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    provider: str | None = None
    model: str | None = None
    pending_call_id: str | None = None
    limits: dict[str, Any] = field(default_factory=dict)  # kept so a resumed run keeps them
    answer: Answer | None = None
    started: float = field(default_factory=time.monotonic)
    steps: list[dict[str, Any]] = field(default_factory=list)  # not yet written

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def offered(self) -> set[str]:
        return {tool["function"]["name"] for tool in self.tools}

    @property
    def write_skills(self) -> set[str]:
        """Offered skills that change something (reflection follows each of them)."""
        return {
            tool["function"]["name"]
            for tool in self.tools
            if tool["function"].get("x-flowpilot-side-effects") == "write"
        }

    def step(
        self,
        kind: str,
        *,
        skill: str | None = None,
        input: dict[str, Any] | None = None,
        output: dict[str, Any] | None = None,
        tokens: int = 0,
        duration_ms: int = 0,
    ) -> None:
        self.steps.append(
            {
                "kind": kind,
                "skill": skill,
                "input": plain(input or {}),
                "output": plain(output or {}),
                "tokens": tokens,
                "duration_ms": duration_ms,
            }
        )

    def account(self, reply: ModelReply, cost_usd: float) -> None:
        self.model_calls += reply.attempts
        self.prompt_tokens += reply.usage.prompt_tokens
        self.completion_tokens += reply.usage.completion_tokens
        self.cost_usd += cost_usd
        self.provider, self.model = reply.provider, reply.model

    def to_state(self, *, resumable: bool = True) -> dict[str, Any]:
        """What is kept of the run. Only a paused run needs its conversation and tools to
        resume; a finished one keeps the ledger, work log and answer (steps hold the rest)."""
        conversation = (
            {"messages": self.messages, "tools": self.tools}
            if resumable
            else {"offered": sorted(self.offered)}
        )
        return plain(
            {
                "actor": self.actor,
                **conversation,
                "ledger": self.ledger.to_list(with_results=False),
                "work_log": self.work_log,
                "confirmations": [c.model_dump(mode="json") for c in self.confirmations],
                "executions": self.executions,
                "tool_calls": self.tool_calls,
                "model_calls": self.model_calls,
                "pending_call_id": self.pending_call_id,
                "limits": self.limits,
                "answer": self.answer.model_dump(mode="json") if self.answer else None,
            }
        )

    @classmethod
    def from_row(cls, tenant_id: uuid.UUID, row: dict[str, Any]) -> RunState:
        state = row["state"] or {}
        frame = row.get("goal_frame") or None
        return cls(
            tenant_id=tenant_id,
            run_id=row["run_id"],
            trigger=row["trigger"],
            actor=state.get("actor") or {"type": "flowpilot", "id": "engine"},
            thread_id=row.get("thread_id"),
            objective_id=row.get("objective_id"),
            messages=state.get("messages") or [],
            tools=state.get("tools") or [],
            ledger=Ledger.from_list(state.get("ledger") or []),
            goal_frame=GoalFrame(**frame) if frame else None,
            work_log=state.get("work_log") or [],
            confirmations=[Confirmation(**c) for c in state.get("confirmations") or []],
            executions=state.get("executions") or [],
            tool_calls=state.get("tool_calls") or 0,
            model_calls=state.get("model_calls") or 0,
            prompt_tokens=row.get("prompt_tokens") or 0,
            completion_tokens=row.get("completion_tokens") or 0,
            cost_usd=float(row.get("cost_usd") or 0),
            provider=row.get("provider"),
            model=row.get("model"),
            pending_call_id=state.get("pending_call_id"),
            limits=state.get("limits") or {},
        )

    def checkpoint(
        self,
        db: Database,
        status: str,
        *,
        stop_reason: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """End a turn of the run (``status``: completed, waiting_approval, stopped, failed):
        its journalled steps, counters and kept state, and its answer posted to its thread,
        in one round trip."""
        from flowpilot.db import as_json

        posted = self.answer if self.thread_id is not None else None
        db.one(
            self.tenant_id,
            "run_checkpoint",
            run_id=self.run_id,
            steps=as_json(self.steps),
            status=status,
            state=self.to_state(resumable=status == "waiting_approval"),
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost_usd=round(self.cost_usd, 6),
            provider=self.provider,
            model=self.model,
            goal_frame=self.goal_frame.to_dict() if self.goal_frame else {},
            stop_reason=stop_reason,
            error=error,
            thread_id=self.thread_id,
            reply=posted.content if posted else None,
            projection=posted.model_dump(mode="json") if posted else None,
        )
        self.steps = []
