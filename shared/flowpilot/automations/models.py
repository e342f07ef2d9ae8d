"""What an automation is, as callers create it and as it is shown."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

TriggerKind = Literal["cron", "event", "signal"]
Executor = Literal["flowpilot", "platform"]


def _trimmed(value: str) -> str:
    value = " ".join(value.split())
    if not value:
        raise ValueError("must not be blank")
    return value


Name = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(_trimmed)]
TriggerSpec = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_trimmed)]


class NewAutomation(BaseModel):
    """A new automation. ``trigger_spec`` is a cron line or ``rate(...)`` for ``cron``, and
    the agent_events kind or signal kind to react to for ``event`` and ``signal``.

    ``executor``: ``platform`` runs the skill with exactly these arguments; ``flowpilot``
    asks the reasoning engine to run it (it may fill in what the arguments leave open)."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    trigger_kind: TriggerKind
    trigger_spec: TriggerSpec
    skill: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    executor: Executor = "platform"


class Automation(BaseModel):
    automation_id: uuid.UUID
    name: str
    trigger_kind: TriggerKind
    trigger_spec: str
    skill: str
    arguments: dict[str, Any]
    executor: Executor
    enabled: bool
    next_run_at: dt.datetime | None = None
    last_run_at: dt.datetime | None = None
    last_outcome: str | None = None
    created_at: dt.datetime
