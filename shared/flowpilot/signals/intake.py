"""Signal intake: one transaction writes the signal and its outbox row, then it is published."""

from __future__ import annotations

import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.errors import NotFound
from flowpilot.signals.models import NewSignal
from flowpilot.signals.queue import publish_rows


def create_signal(db: Database, tenant_id: uuid.UUID, signal: NewSignal) -> dict[str, Any]:
    """Record a signal (committed before anything is sent), then publish it best effort."""
    row = db.one(
        tenant_id,
        "signal_insert",
        project_id=signal.project_id,
        source=signal.source,
        kind=signal.kind,
        title=signal.title,
        body=signal.body,
        payload=signal.payload,
    )
    if row is None:
        raise NotFound(f"there is no project {signal.project_id}", code="project_not_found")
    payload = {"signal_id": str(row["signal_id"]), "tenant_id": str(tenant_id)}
    publish_rows(db, [{"outbox_id": row["outbox_id"], "topic": "signal.plan", "payload": payload}])
    return {"signal_id": row["signal_id"], "status": row["status"]}
