"""The shapes signals travel in."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class NewSignal(BaseModel):
    """What a caller sends to ``POST /signals`` (the tenant comes from authentication)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=500)
    body: str = Field("", max_length=20_000)
    kind: str = Field("generic", min_length=1, max_length=64)
    source: str = Field("api", min_length=1, max_length=64)
    project_id: uuid.UUID | None = None
    payload: dict[str, Any] = Field(default_factory=dict)


class SignalMessage(BaseModel):
    """The queue message body: which signal of which tenant to plan."""

    model_config = ConfigDict(extra="ignore")

    signal_id: uuid.UUID
    tenant_id: uuid.UUID
