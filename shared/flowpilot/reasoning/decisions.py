"""A person's decision on an approval: record it, follow it through, resume the paused run.

Approving runs the operation at once (exactly once overall: the execute pipeline claims the
approval), and a run that was waiting for it continues to its answer. Rejecting also
resumes the run, which then answers without that action.
"""

from __future__ import annotations

import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.execute import approvals
from flowpilot.execute.client import ExecuteClient
from flowpilot.execute.followthrough import follow_through
from flowpilot.execute.models import ExecuteResult


def decide(
    db: Database,
    tenant_id: uuid.UUID,
    approval_id: uuid.UUID,
    *,
    approve: bool,
    by: str,
    client: ExecuteClient | None = None,
) -> tuple[dict[str, Any], ExecuteResult | None]:
    """Returns the approval as it ends up and, when approved, the execution's result."""
    from flowpilot.reasoning.engine import resume

    decided = approvals.decide(db, tenant_id, approval_id, approve=approve, by=by)
    execution = follow_through(db, tenant_id, decided, client) if approve else None
    if decided.get("run_id") is not None:
        resume(tenant_id, decided["run_id"], execution, db=db, executor=client)
    current = db.one(tenant_id, "approval_get", approval_id=approval_id)
    return current or decided, execution
