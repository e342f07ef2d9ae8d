"""Which tenants tick: the ones with due work, selected in one query."""

from __future__ import annotations

import uuid

from flowpilot.db import Database
from flowpilot.heartbeat.models import TickReport
from flowpilot.heartbeat.tick import tick

MAX_TENANTS_PER_INVOCATION = 50


def run_heartbeat(db: Database, *, tenant_id: uuid.UUID | None = None) -> list[TickReport]:
    """Tick one tenant (when named) or every tenant with due work."""
    if tenant_id is not None:
        return [tick(db, tenant_id)]
    due = db.all(None, "heartbeat_due_tenants", limit=MAX_TENANTS_PER_INVOCATION)
    return [tick(db, row["tenant_id"]) for row in due]
