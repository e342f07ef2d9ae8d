"""Heartbeat overhead: an idle tick, and a tick that advances an objective by one skill call.

Model latency is excluded by construction: the one-skill tick runs on the offline heuristic
reasoner (no network), on a tenant whose only enabled skill is ``memory_write`` (instant).
Baseline, measured in the same run: one bare database round trip (``SELECT 1``). Prints one
JSON line per figure. Targets: idle at most 3 round trips and 5 ms; one-skill tick at most
12 round trips and 25 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from flowpilot.db import Database, as_json
from flowpilot.heartbeat.tick import tick
from flowpilot.tenancy import create_tenant
from flowpilot.testing.databases import TestPostgres


def _sample(db: Database, work: Callable[[], Any], runs: int) -> tuple[list[float], list[int]]:
    times: list[float] = []
    trips: list[int] = []
    for _ in range(runs):
        before = db.stats.round_trips
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
        trips.append(db.stats.round_trips - before)
    return times, trips


def _line(figure: str, times: list[float], trips: list[int], **extra: Any) -> dict[str, Any]:
    return {
        "bench": "heartbeat",
        "figure": figure,
        "median_ms": round(statistics.median(times), 3),
        "p95_ms": round(sorted(times)[int(len(times) * 0.95) - 1], 3),
        "round_trips": statistics.median(trips),
        **extra,
    }


def measure(db: Database, runs: int) -> list[dict[str, Any]]:
    idle = create_tenant(db, "Idle Co", modules=("flowpilot",))
    busy = create_tenant(db, "Busy Co", modules=("flowpilot",))
    with db.connection() as conn:
        conn.execute(
            "UPDATE agent_skills SET enabled = (name = 'memory_write') WHERE tenant_id = %s",
            (busy.tenant_id,),
        )
        # Realistic objectives (a three-step plan each), enough for every timed tick to
        # find one open: each tick finishes one step.
        for n in range((runs + 40) // 3 + 5):
            plan = [{"step": f"Write note {n}.{i}", "status": "pending"} for i in range(3)]
            conn.execute(
                "INSERT INTO agent_objectives (tenant_id, goal, priority, progress)"
                " VALUES (%s, %s, 90, %s)",
                (busy.tenant_id, f"Keep a running note, part {n}",
                 as_json({"plan": plan, "cursor": 0})),
            )  # fmt: skip

    def ping() -> None:
        db.one(None, "database_ping")

    def idle_tick() -> None:
        assert tick(db, idle.tenant_id).outcome == "idle"

    def skill_tick() -> None:
        report = tick(db, busy.tenant_id)
        assert report.outcome == "executed" and report.skill == "memory_write", report

    for work in (ping, idle_tick, skill_tick):  # warm the pool, caches, prepared statements
        _sample(db, work, 10)
    ping_times, ping_trips = _sample(db, ping, runs)
    idle_times, idle_trips = _sample(db, idle_tick, runs)
    skill_times, skill_trips = _sample(db, skill_tick, runs)
    baseline = statistics.median(ping_times)
    return [
        _line("db_round_trip_baseline", ping_times, ping_trips),
        _line(
            "idle_tick", idle_times, idle_trips,
            ratio_to_round_trip=round(statistics.median(idle_times) / baseline, 1),
            target_ms=5, target_round_trips=3,
            ok=statistics.median(idle_times) <= 5 and statistics.median(idle_trips) <= 3,
        ),
        _line(
            "one_skill_tick", skill_times, skill_trips,
            ratio_to_round_trip=round(statistics.median(skill_times) / baseline, 1),
            target_ms=25, target_round_trips=12,
            ok=statistics.median(skill_times) <= 25 and statistics.median(skill_trips) <= 12,
            model="offline heuristic (no model latency)",
        ),
    ]  # fmt: skip


def main() -> None:
    from flowpilot.observability import logger

    logger.setLevel("WARNING")  # one log line per tick would drown the figures
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    server = TestPostgres.start()
    server.build_template()
    try:
        with server.clone() as db:
            for line in measure(db, args.runs):
                print(json.dumps(line))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
