"""The soul: who the agent is, how it speaks, what it values and the lines it never crosses.

It lives in ``agent_memory``, where every run's bootstrap reads it before anything else:
category ``soul`` holds the rows ``identity``, ``voice`` and ``values``, and category
``constraints`` one row per constraint (``constraint_01`` ...), so each constraint reaches
the goal frame as a boundary of its own. A row's ``content`` is the prompt text; its
``metadata.value`` keeps the field as it was given, so reading the soul back is exact.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from flowpilot.db import Database, as_json

MAX_TEXT_CHARS = 2000
MAX_ITEMS = 20
MAX_ITEM_CHARS = 300


def _text(value: str) -> str:
    return value.strip()


def _lines(values: list[str]) -> list[str]:
    items = [" ".join(value.split()) for value in values]
    return [item for item in items if item]


Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS), AfterValidator(_text)]
Item = Annotated[str, Field(max_length=MAX_ITEM_CHARS)]
Lines = Annotated[list[Item], Field(max_length=MAX_ITEMS), AfterValidator(_lines)]


class Soul(BaseModel):
    """The whole soul; a field left empty is removed."""

    model_config = ConfigDict(extra="forbid")

    identity: Text = ""
    voice: Text = ""
    values: Lines = Field(default_factory=list)
    constraints: Lines = Field(default_factory=list)


class SoulView(Soul):
    updated_at: dt.datetime | None = None


def get_soul(db: Database, tenant_id: uuid.UUID) -> SoulView:
    rows = db.all(tenant_id, "soul_read")
    fields: dict[str, Any] = {"constraints": []}
    for row in rows:
        value = (row["metadata"] or {}).get("value", row["content"])
        if row["category"] == "constraints":
            fields["constraints"].append(str(value))
        elif row["key"] in ("identity", "voice"):
            fields[row["key"]] = str(value)
        elif row["key"] == "values":
            fields["values"] = value if isinstance(value, list) else row["content"].splitlines()
    stamps = [row["updated_at"] for row in rows]
    return SoulView.model_validate({**fields, "updated_at": max(stamps, default=None)})


def set_soul(db: Database, tenant_id: uuid.UUID, soul: Soul, *, by: str) -> SoulView:
    """Replace the soul with ``soul``; the next run's bootstrap already sees it."""
    db.one(tenant_id, "soul_replace", rows=as_json(soul_rows(soul)), by=by)
    return get_soul(db, tenant_id)


def soul_rows(soul: Soul) -> list[dict[str, Any]]:
    """The agent_memory rows for a soul, their content written for the prompt."""
    rows = []
    if soul.identity:
        rows.append(_row("soul", "identity", soul.identity, soul.identity))
    if soul.voice:
        rows.append(_row("soul", "voice", f"Voice: {soul.voice}", soul.voice))
    if soul.values:
        text = "Values:\n" + "\n".join(f"- {value}" for value in soul.values)
        rows.append(_row("soul", "values", text, soul.values))
    for number, constraint in enumerate(soul.constraints, start=1):
        # Zero-padded so the bootstrap's ORDER BY key keeps the order they were given in.
        rows.append(_row("constraints", f"constraint_{number:02d}", constraint, constraint))
    return rows


def _row(category: str, key: str, content: str, value: Any) -> dict[str, Any]:
    return {"category": category, "key": key, "content": content, "metadata": {"value": value}}
