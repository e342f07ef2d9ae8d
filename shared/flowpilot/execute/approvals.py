"""Approvals: a person's yes or no before an ``approve`` skill runs, followed through once."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.errors import Conflict, NotFound

APPROVAL_TTL_HOURS = 48
_WAIT_FOR_RESULT_S = 30.0


def arguments_hash(skill: str, arguments: dict[str, Any]) -> str:
    canonical = json.dumps({"skill": skill, "arguments": arguments}, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def list_approvals(
    db: Database, tenant_id: uuid.UUID, *, status: str | None = None, limit: int = 50
) -> list[dict[str, Any]]:
    db.run(tenant_id, "approvals_expire")
    return db.all(tenant_id, "approval_list", status=status, limit=limit)


def decide(
    db: Database, tenant_id: uuid.UUID, approval_id: uuid.UUID, *, approve: bool, by: str
) -> dict[str, Any]:
    """Approve or reject a pending approval; anything else is a clear conflict."""
    db.run(tenant_id, "approvals_expire")
    decided = db.one(
        tenant_id,
        "approval_decide",
        approval_id=approval_id,
        decision="approved" if approve else "rejected",
        decided_by=by,
    )
    if decided is not None:
        return decided
    current = db.one(tenant_id, "approval_get", approval_id=approval_id)
    if current is None:
        raise NotFound("no such approval", code="approval_not_found")
    raise Conflict(
        f"this approval is already {current['status']}", code=f"approval_{current['status']}"
    )


def wait_for_result(db: Database, tenant_id: uuid.UUID, approval_id: uuid.UUID) -> dict[str, Any]:
    """The stored result of an approval another caller is executing (or has executed)."""
    deadline = time.monotonic() + _WAIT_FOR_RESULT_S
    while True:
        row = db.one(tenant_id, "approval_get", approval_id=approval_id)
        if row is None:
            raise NotFound("no such approval", code="approval_not_found")
        if row["status"] != "executing" or time.monotonic() > deadline:
            return row
        time.sleep(0.05)
