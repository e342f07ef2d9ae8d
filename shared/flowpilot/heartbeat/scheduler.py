"""Which tenants tick: the ones with due work, selected in one query.

A scheduled invocation ticks a handful of tenants itself; beyond that it hands each tenant
to its own asynchronous invocation of the heartbeat function, so thousands of tenants tick
within one period (scale is AWS's job: every tick is one short, stateless invocation).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from flowpilot.config import get_settings
from flowpilot.db import Database
from flowpilot.execute.client import ExecuteClient
from flowpilot.heartbeat.models import TickReport
from flowpilot.heartbeat.tick import tick

MAX_TENANTS_PER_INVOCATION = 1_000


@dataclass
class ScheduledRun:
    ticks: list[TickReport] = field(default_factory=list)
    fanned_out: int = 0


def run_heartbeat(
    db: Database, *, tenant_id: uuid.UUID | None = None, executor: ExecuteClient | None = None
) -> list[TickReport]:
    """Tick one tenant (when named) or, inline, every tenant with due work."""
    if tenant_id is not None:
        return [tick(db, tenant_id, executor=executor)]
    due = db.all(None, "heartbeat_due_tenants", limit=MAX_TENANTS_PER_INVOCATION)
    return [tick(db, row["tenant_id"], executor=executor) for row in due]


def run_scheduled(db: Database, *, fan_out: Any = None) -> ScheduledRun:
    """The scheduled tick: inline for a handful of tenants, fanned out beyond that."""
    settings = get_settings()
    due = [
        row["tenant_id"]
        for row in db.all(None, "heartbeat_due_tenants", limit=MAX_TENANTS_PER_INVOCATION)
    ]
    if len(due) <= settings.heartbeat_fanout_threshold or not settings.heartbeat_function:
        return ScheduledRun(ticks=[tick(db, tenant) for tenant in due])
    invoke = fan_out or _async_invoker(settings.heartbeat_function)
    for tenant in due:
        invoke(tenant)
    return ScheduledRun(fanned_out=len(due))


def _async_invoker(function_name: str) -> Any:
    import boto3

    client = boto3.client("lambda")

    def invoke(tenant: uuid.UUID) -> None:
        client.invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=json.dumps({"tenant_id": str(tenant)}).encode(),
        )

    return invoke
