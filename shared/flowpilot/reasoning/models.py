"""What a run produces and what a customer is shown (the customer-safe projection)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field

Trigger = Literal["chat", "heartbeat", "signal", "peer", "automation", "workflow"]
RunStatus = Literal["running", "waiting_approval", "completed", "failed", "stopped"]


class Confirmation(BaseModel):
    """An operation waiting for the person's yes or no."""

    approval_id: uuid.UUID
    skill: str
    summary: str
    expires_at: dt.datetime | None = None


class Action(BaseModel):
    """Something the person can do next, in words (and the API call that does it)."""

    label: str
    method: str | None = None
    path: str | None = None


class Artifact(BaseModel):
    kind: str
    title: str
    content: dict[str, Any] = Field(default_factory=dict)


class Answer(BaseModel):
    """The assistant message as a customer sees it: no run ids, step ids or status codes."""

    content: str
    work_log: list[str] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)
    confirmations: list[Confirmation] = Field(default_factory=list)


class MessageView(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: str
    created_at: dt.datetime


class ThreadView(BaseModel):
    """``thread_id``, the messages, and the latest assistant message in full."""

    thread_id: uuid.UUID
    title: str
    messages: list[MessageView]
    message: Answer | None = None


class ThreadSummary(BaseModel):
    thread_id: uuid.UUID
    title: str
    updated_at: dt.datetime
    last_message: str | None = None
