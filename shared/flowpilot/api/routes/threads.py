"""``/threads`` and ``/ask``: talking with the operator, one engine turn per message."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from flowpilot.api.auth import Principal
from flowpilot.api.deps import DB, Caller
from flowpilot.chat import threads as chat
from flowpilot.execute.models import Actor
from flowpilot.reasoning.models import ThreadSummary, ThreadView

router = APIRouter(tags=["threads"])


class MessageBody(BaseModel):
    """A person's message; the tenant and the author come from authentication."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, max_length=chat.MAX_MESSAGE_CHARS)


class AskBody(MessageBody):
    """A message for a new thread, or for the thread ``thread_id`` when given."""

    thread_id: uuid.UUID | None = None


def _author(caller: Principal) -> Actor:
    caller.require("chat")
    return Actor(type="user", id=caller.subject)


@router.post("/threads", response_model=ThreadView, status_code=201)
def start_thread(body: MessageBody, caller: Caller, db: DB) -> ThreadView:
    return chat.start_thread(db, caller.tenant_id, _author(caller), body.message)


@router.get("/threads", response_model=list[ThreadSummary])
def list_threads(
    caller: Caller, db: DB, limit: Annotated[int, Query(ge=1, le=200)] = 50
) -> list[ThreadSummary]:
    caller.require("chat")
    return chat.list_threads(db, caller.tenant_id, limit=limit)


@router.get("/threads/{thread_id}", response_model=ThreadView)
def get_thread(thread_id: uuid.UUID, caller: Caller, db: DB) -> ThreadView:
    caller.require("chat")
    return chat.get_thread(db, caller.tenant_id, thread_id)


@router.post("/threads/{thread_id}/messages", response_model=ThreadView)
def post_message(thread_id: uuid.UUID, body: MessageBody, caller: Caller, db: DB) -> ThreadView:
    return chat.post_message(db, caller.tenant_id, thread_id, _author(caller), body.message)


@router.post("/ask", response_model=ThreadView)
def ask(body: AskBody, caller: Caller, db: DB) -> ThreadView:
    return chat.ask(db, caller.tenant_id, _author(caller), body.message, body.thread_id)
