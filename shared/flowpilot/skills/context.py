"""What a skill handler is given when it runs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from flowpilot.config import Settings
from flowpilot.db import Database
from flowpilot.errors import FlowPilotError
from flowpilot.execute.models import Actor


class SkillFailed(FlowPilotError):
    """A skill ran and could not do its job; the message is fit to show a person."""

    code = "skill_failed"
    status = 502


@dataclass(frozen=True)
class SkillContext:
    db: Database
    settings: Settings
    tenant_id: uuid.UUID
    actor: Actor
    skill: dict[str, Any]  # the agent_skills row: name, handler, side_effects, config, ...
    run_id: uuid.UUID | None = None

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.skill.get("config") or {})

    @property
    def target(self) -> str:
        """What the handler string points at: ``webhook:<url>`` gives the URL."""
        return str(self.skill["handler"]).split(":", 1)[1]
