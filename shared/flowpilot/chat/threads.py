"""Threads: a person's message in, one engine turn, the customer-safe thread view out.

The engine appends the assistant message itself (its projection is the Answer); this module
owns the thread, the user's messages, and reading them back for one tenant only.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ValidationError

from flowpilot.db import Database
from flowpilot.errors import InvalidRequest, NotFound
from flowpilot.execute.models import Actor
from flowpilot.reasoning.models import Answer, MessageView, ThreadSummary, ThreadView

MAX_MESSAGE_CHARS = 8000
TITLE_CHARS = 60
VIEW_MESSAGES = 200


def start_thread(db: Database, tenant_id: uuid.UUID, actor: Actor, message: str) -> ThreadView:
    """A new thread titled after its first message, answered by one engine turn."""
    text = checked_message(message)
    row = db.one(
        tenant_id,
        "thread_start",
        title=title_for(text),
        created_by=f"{actor.type}:{actor.id}",
        content=text,
    )
    assert row is not None  # an INSERT ... RETURNING always answers
    thread_id = uuid.UUID(str(row["thread_id"]))
    _turn(db, tenant_id, thread_id, actor, text)
    return get_thread(db, tenant_id, thread_id)


def post_message(
    db: Database, tenant_id: uuid.UUID, thread_id: uuid.UUID, actor: Actor, message: str
) -> ThreadView:
    """The next turn on one of the tenant's threads."""
    text = checked_message(message)
    if db.one(tenant_id, "thread_user_message_add", thread_id=thread_id, content=text) is None:
        raise _not_found(thread_id)
    _turn(db, tenant_id, thread_id, actor, text)
    return get_thread(db, tenant_id, thread_id)


def ask(
    db: Database,
    tenant_id: uuid.UUID,
    actor: Actor,
    message: str,
    thread_id: uuid.UUID | None = None,
) -> ThreadView:
    """``POST /ask``: a new thread, or the next turn on an existing one."""
    if thread_id is None:
        return start_thread(db, tenant_id, actor, message)
    return post_message(db, tenant_id, thread_id, actor, message)


def list_threads(db: Database, tenant_id: uuid.UUID, limit: int = 50) -> list[ThreadSummary]:
    rows = db.all(tenant_id, "thread_list", limit=max(1, min(limit, 200)))
    return [ThreadSummary.model_validate(row) for row in rows]


def get_thread(db: Database, tenant_id: uuid.UUID, thread_id: uuid.UUID) -> ThreadView:
    """The thread's messages oldest first, and the latest assistant answer in full."""
    rows = db.all(tenant_id, "thread_view", thread_id=thread_id, limit=VIEW_MESSAGES)
    if not rows:
        raise _not_found(thread_id)
    messages = [_message(row) for row in rows if row["role"] is not None]
    answers = [row for row in rows if row["role"] == "assistant"]
    return ThreadView(
        thread_id=rows[0]["thread_id"],
        title=rows[0]["title"],
        messages=messages,
        message=_answer(answers[-1]) if answers else None,
    )


def checked_message(message: str) -> str:
    text = message.strip()
    if not text:
        raise InvalidRequest("the message is empty", code="message_empty")
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidRequest(
            f"the message is over {MAX_MESSAGE_CHARS} characters",
            code="message_too_long",
            details={"limit": MAX_MESSAGE_CHARS, "length": len(text)},
        )
    return text


def title_for(message: str) -> str:
    """The message's leading words within TITLE_CHARS (cut mid-word only for one long word)."""
    words = " ".join(message.split())
    if len(words) <= TITLE_CHARS:
        return words
    cut = words[: TITLE_CHARS + 1].rfind(" ")
    return words[:cut] if cut > 0 else words[:TITLE_CHARS]


def _turn(
    db: Database, tenant_id: uuid.UUID, thread_id: uuid.UUID, actor: Actor, text: str
) -> None:
    # Imported here: reading a thread must not pay for the engine and its model layer.
    from flowpilot.reasoning.engine import run_turn

    run_turn(tenant_id, text, actor=actor, trigger="chat", thread_id=thread_id, db=db)


def _message(row: dict[str, Any]) -> MessageView:
    return MessageView(role=row["role"], content=row["content"], created_at=row["created_at"])


def _answer(row: dict[str, Any]) -> Answer:
    projection = row["projection"] if isinstance(row["projection"], dict) else {}
    try:
        return Answer.model_validate({"content": row["content"], **projection})
    except ValidationError:
        # A projection this version cannot read still shows its words, never a 500.
        return Answer(content=row["content"])


def _not_found(thread_id: uuid.UUID) -> NotFound:
    return NotFound(f"no thread {thread_id}", code="thread_not_found")
