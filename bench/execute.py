"""In-process overhead of executing an ``auto`` internal skill, and its database round trips.

Baseline, measured in the same run: the skill's own work (its handler called directly with
the same context). Overhead = full execute() minus that baseline. Prints one JSON line per
figure. Target: at most 3 round trips per execution.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from flowpilot.config import get_settings
from flowpilot.db import Database
from flowpilot.execute.models import Actor, ExecuteRequest
from flowpilot.execute.service import execute
from flowpilot.skills.context import SkillContext
from flowpilot.skills.handlers import run_handler
from flowpilot.tenancy import create_tenant
from flowpilot.testing.databases import TestPostgres

ARGS = {"query": "gate code", "category": None, "limit": None}


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()

    server = TestPostgres.start()
    server.build_template()
    try:
        with server.clone() as db:
            measure(db, args.runs)
    finally:
        server.stop()


def measure(db: Database, runs: int) -> None:
    tenant = create_tenant(db, "Bench Co")
    actor = Actor(type="user", id="bench")
    request = ExecuteRequest(
        tenant_id=tenant.tenant_id, actor=actor, skill="memory_search", arguments=ARGS
    )
    skill = db.one(tenant.tenant_id, "skill_get", name="memory_search")
    assert skill is not None
    ctx = SkillContext(db, get_settings(), tenant.tenant_id, actor, skill)
    for _ in range(20):  # warm the pool, prepared statements and caches
        execute(request, db=db)
        run_handler(ctx, ARGS)

    full: list[float] = []
    bare: list[float] = []
    trips: list[int] = []
    bare_trips: list[int] = []
    for _ in range(runs):
        before = db.stats.round_trips
        started = time.perf_counter()
        result = execute(request, db=db)
        full.append(time.perf_counter() - started)
        trips.append(db.stats.round_trips - before)
        assert result.status == "executed", result

        before = db.stats.round_trips
        started = time.perf_counter()
        run_handler(ctx, ARGS)
        bare.append(time.perf_counter() - started)
        bare_trips.append(db.stats.round_trips - before)

    overhead = [f - b for f, b in zip(full, bare, strict=True)]
    round_trips = statistics.median(trips)
    lines = [
        {"bench": "execute", "figure": "execute_median_ms", "value": _median_ms(full)},
        {"bench": "execute", "figure": "skill_only_median_ms", "value": _median_ms(bare)},
        {
            "bench": "execute",
            "figure": "overhead_median_ms",
            "value": _median_ms(overhead),
            "ratio_to_skill_only": round(statistics.median(full) / statistics.median(bare), 2),
        },
        {
            "bench": "execute",
            "figure": "round_trips_per_execution",
            "value": round_trips,
            "skill_own_round_trips": statistics.median(bare_trips),
            "target": 3,
            "ok": round_trips <= 3,
        },
    ]
    for line in lines:
        print(json.dumps(line))


if __name__ == "__main__":
    main()
