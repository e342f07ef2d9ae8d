"""One heartbeat tick for one tenant: lease, guards, pre-passes, idle short-circuit, advance.

The lease is a row claimed by one conditional upsert (no advisory locks: they break behind
the transaction pooler), so overlapping ticks for a tenant return ``busy`` at once.
"""

from __future__ import annotations

import secrets
import time
import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.heartbeat.models import TickReport
from flowpilot.observability import logger

LEASE_TTL_S = 240


def tick(db: Database, tenant_id: uuid.UUID) -> TickReport:
    started = time.perf_counter()
    holder = secrets.token_hex(8)
    state = db.one(
        None, "heartbeat_begin", tenant=tenant_id, holder=holder, ttl_seconds=LEASE_TTL_S
    )
    if state is None or not state["claimed"]:
        return TickReport(tenant_id, "busy", reason="another tick holds the lease")
    report = _decide(state, tenant_id)
    report.duration_ms = int((time.perf_counter() - started) * 1000)
    db.one(
        None,
        "heartbeat_finish",
        tenant=tenant_id,
        holder=holder,
        outcome=report.outcome,
        objective_id=report.objective_id,
        skill=report.skill,
        model_calls=report.model_calls,
        tokens=report.tokens,
        duration_ms=report.duration_ms,
        reason=report.reason,
    )
    logger.info("heartbeat tick", **report.to_dict())
    return report


def _decide(state: dict[str, Any], tenant_id: uuid.UUID) -> TickReport:
    if not state["module_enabled"]:
        return TickReport(tenant_id, "skipped", reason="the FlowPilot module is disabled")
    budget = state["daily_token_budget"] or 0
    if state["tokens_today"] >= budget:
        return TickReport(
            tenant_id,
            "skipped",
            reason=f"daily token budget spent ({state['tokens_today']} of {budget})",
        )
    pending = {
        key: state[key]
        for key in (
            "open_objectives",
            "due_automations",
            "approved_approvals",
            "stale_approvals",
            "waiting_runs",
            "unpublished_outbox",
        )
        if state[key]
    }
    if not pending:
        return TickReport(tenant_id, "idle", reason="nothing pending")
    return TickReport(
        tenant_id,
        "skipped",
        reason="pending work waits for the objective runner",
        prepasses=pending,
    )
