"""What a heartbeat tick reports."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Outcome = Literal["idle", "busy", "executed", "waiting_approval", "skipped", "failed"]


@dataclass
class TickReport:
    tenant_id: uuid.UUID
    outcome: Outcome
    model_calls: int = 0
    tokens: int = 0
    objective_id: uuid.UUID | None = None
    skill: str | None = None
    reason: str | None = None
    duration_ms: int = 0
    prepasses: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tenant_id"] = str(self.tenant_id)
        data["objective_id"] = str(self.objective_id) if self.objective_id else None
        return data
