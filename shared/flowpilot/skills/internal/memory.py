"""``memory_write`` and ``memory_search``: the agent's notes, facts, lessons and preferences."""

from __future__ import annotations

import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers.internal import internal

CATEGORIES = ("working", "fact", "lesson", "preference")
DEFAULT_LIMIT = 5
MAX_LIMIT = 20


def search_memory(
    db: Database,
    tenant_id: uuid.UUID,
    query: str,
    *,
    category: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    """Unexpired memories matching ``query``, best first (text rank, recency, importance)."""
    text = query.strip()
    if not text:
        return []
    return db.all(
        tenant_id,
        "memory_search",
        query=text,
        category=category,
        limit=max(1, min(int(limit), MAX_LIMIT)),
    )


@internal("memory_write")
def memory_write(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    content = str(arguments.get("content") or "").strip()
    if not content:
        raise SkillFailed("a memory needs some content", code="empty_memory")
    category = arguments.get("category") or "fact"
    if category not in CATEGORIES:
        raise SkillFailed(
            f"category must be one of {', '.join(CATEGORIES)}", code="invalid_category"
        )
    key = str(arguments.get("key") or "").strip() or None
    row = ctx.db.one(
        ctx.tenant_id,
        "memory_upsert",
        category=category,
        key=key,
        content=content,
        importance=arguments.get("importance"),
        expires_in_days=arguments.get("expires_in_days"),
        metadata={"written_by": f"{ctx.actor.type}:{ctx.actor.id}"},
    )
    assert row is not None
    return {"memory_id": str(row["memory_id"]), "created": bool(row["created"])}


@internal("memory_search")
def memory_search(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    results = search_memory(
        ctx.db,
        ctx.tenant_id,
        str(arguments.get("query") or ""),
        category=arguments.get("category"),
        limit=arguments.get("limit") or DEFAULT_LIMIT,
    )
    return {"results": results}
