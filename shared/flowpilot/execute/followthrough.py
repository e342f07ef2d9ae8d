"""Following an approval through: run the approved skill once, through the execute transport."""

from __future__ import annotations

import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.execute.client import ExecuteClient, default_client
from flowpilot.execute.models import Actor, ExecuteRequest, ExecuteResult


def follow_through(
    db: Database, tenant_id: uuid.UUID, approval: dict[str, Any], client: ExecuteClient | None
) -> ExecuteResult:
    """Execute an approved operation as its original requester; exactly once overall."""
    request = ExecuteRequest(
        tenant_id=tenant_id,
        actor=Actor.model_validate(approval["requested_by"]),
        skill=approval["skill"],
        arguments=approval["arguments"],
        approval_id=approval["approval_id"],
        run_id=approval.get("run_id"),
    )
    return (client or default_client(db)).execute(request)
