"""One-tool chat turns through the reasoning engine, and the bootstrap prompt with 537 skills.

Turns: each turn the scripted model calls ``get_briefing`` and then answers with the structured
final answer; ``run_turn(trigger="chat")`` runs it against a real PostgreSQL. Reported per turn
(medians): wall time, database round trips (``db.stats``), model HTTP calls.

Baseline, measured in the same run and interleaved with the turns: the same two model requests
(the exact bodies the engine sent, replayed the engine's way with one reused ``openai``
client against the same server) plus the bare ``get_briefing`` work (``build_briefing``).
That is what any agent pays for this turn; engine overhead = turn - baseline.

Prompt: a second tenant with 527 synthetic skills beside the 10 built-ins (537), perceiving
"what needs my attention today?": bootstrap prompt tokens + offered tool definitions, against
offering every tool definition (the naive baseline). Target: at most 3,000 tokens.

Run: ``.venv/bin/python bench/turn.py [--turns N] [--profile]``. One JSON line per figure;
``--profile`` also prints cProfile's top 15 (cumulative) of the turns to stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import re
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from flowpilot.config import reset_settings
from flowpilot.db import Database
from flowpilot.execute.models import Actor, ExecuteRequest, ExecuteResult
from flowpilot.execute.service import execute
from flowpilot.reasoning.bootstrap import estimate_tokens, perceive, tool_definition
from flowpilot.reasoning.engine import TurnResult, run_turn
from flowpilot.skills.internal.briefing import build_briefing
from flowpilot.skills.registry import sync_packs
from flowpilot.skills.spec import SkillPack, SkillSpec, SqlTemplate
from flowpilot.tenancy import create_tenant
from flowpilot.testing import scripted_model
from flowpilot.testing.databases import TestPostgres
from flowpilot.testing.scripted_model import ScriptedModelServer

BENCH = "turn"
QUESTION = "what needs my attention today?"
OWNER = Actor(type="user", id="bench-owner")
FINAL = {
    "answer": "Two approvals are waiting for you and the spring campaign is on track.",
    "main_claim": "Two approvals are waiting for you",
    "limitations": [],
}
WARMUP = 10
PROMPT_TARGET = 3_000
SYNTHETIC_SKILLS = 527


# -- shared with bench/vs_langgraph.py ---------------------------------------------------------


def instant_model_server() -> ScriptedModelServer:
    """The scripted server: replies cost nothing but the HTTP exchange itself."""
    return ScriptedModelServer().start()


def point_engine_at(server: ScriptedModelServer) -> None:
    """Route the engine's model calls to the scripted server (settings are cached)."""
    os.environ["OPENAI_BASE_URL"] = server.base_url
    os.environ["OPENAI_API_KEY"] = "test"
    os.environ.pop("FLOWPILOT_MODEL_PROVIDER", None)
    reset_settings()


@dataclass
class BoundExecutor:
    """The in-process execute transport, on the bench's database rather than get_db()'s."""

    db: Database

    def execute(self, request: ExecuteRequest) -> ExecuteResult:
        return execute(request, db=self.db)


def flowpilot_turn(
    server: ScriptedModelServer, db: Database, tenant_id: uuid.UUID, executor: BoundExecutor
) -> TurnResult:
    """One chat turn: the model calls get_briefing, then answers."""
    server.queue(scripted_model.tool_call("get_briefing", {}), scripted_model.structured(FINAL))
    result = run_turn(
        tenant_id,
        QUESTION,
        actor=OWNER,
        trigger="chat",
        thread_id=None,
        db=db,
        executor=executor,
    )
    if result.status != "completed" or result.executions != ["get_briefing"] or server.pending:
        raise SystemExit(
            f"turn did not run as scripted: status={result.status} "
            f"reason={result.stop_reason} executions={result.executions} "
            f"unused replies={server.pending}"
        )
    return result


def seed_context(db: Database, tenant_id: uuid.UUID) -> None:
    """A small business's soul, constraints, objectives, recent events and working notes."""
    memories = [
        ("soul", "You run the back office of Harbor Plumbing, a six-person plumbing firm."),
        ("identity", "Speak plainly, like a trusted office manager; the owner is Dana."),
        ("constraints", "Never promise a same-day visit without checking the roster."),
        ("constraints", "Any refund over 200 dollars needs Dana's approval."),
        ("constraints", "Do not email customers between 9 pm and 7 am."),
        ("working", "Waiting on the supplier's reply about the delayed boiler parts."),
        ("working", "The Elm St job needs a second visit next week."),
        ("lesson", "Customers answer quote follow-ups best on Tuesday mornings."),
        ("lesson", "Invoices sent with photos of the finished job get paid faster."),
    ]
    objectives = [
        ("Collect every invoice more than 30 days overdue", 80),
        ("Book the spring boiler-service campaign for 40 customers", 60),
        ("Cut the average quote turnaround to one working day", 50),
        ("Find a second supplier for copper fittings", 30),
    ]
    events = [
        ("signal", "A customer asked to reschedule Thursday's bathroom refit"),
        ("execution", "Sent the weekly overdue-invoice reminders"),
        ("approval", "Dana approved the refund for the Oak Ave leak"),
        ("signal", "New quote request for a kitchen sink replacement"),
        ("execution", "Updated the spring campaign plan"),
    ]
    plan = {
        "plan": [
            {"step": "List the candidates", "status": "done"},
            {"step": "Draft the message", "status": "done"},
            {"step": "Send and follow up", "status": "pending"},
        ],
        "cursor": 2,
    }
    from psycopg.types.json import Jsonb

    with db.connection() as conn:
        for category, content in memories:
            conn.execute(
                "INSERT INTO agent_memory (tenant_id, category, content) VALUES (%s, %s, %s)",
                (tenant_id, category, content),
            )
        for goal, priority in objectives:
            conn.execute(
                "INSERT INTO agent_objectives (tenant_id, goal, priority, progress)"
                " VALUES (%s, %s, %s, %s)",
                (tenant_id, goal, priority, Jsonb(plan)),
            )
        for kind, summary in events:
            conn.execute(
                "INSERT INTO agent_events (tenant_id, kind, summary) VALUES (%s, %s, %s)",
                (tenant_id, kind, summary),
            )


def settle(db: Database) -> None:
    """Fresh planner statistics after the warm-up, as autovacuum keeps them in a running
    system (without them the planner may scan a tenant's runs instead of using a key)."""
    with db.connection() as conn:
        conn.execute("ANALYZE")


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def emit(line: dict[str, Any]) -> None:
    print(json.dumps(line), flush=True)


# -- turns -------------------------------------------------------------------------------------


def measure_turns(
    server: ScriptedModelServer, db: Database, tenant_id: uuid.UUID, turns: int
) -> list[dict[str, Any]]:
    import openai

    executor = BoundExecutor(db)
    for _ in range(WARMUP):
        flowpilot_turn(server, db, tenant_id, executor)
    # The baseline replays exactly what the engine sent in its last warm-up turn.
    first, second = (json.dumps(body).encode() for body in server.requests[-2:])
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)

    def send(body: bytes) -> None:  # the engine's own way of sending a request it built
        client.post("/chat/completions", cast_to=dict, content=body)

    def baseline() -> None:
        server.queue(scripted_model.tool_call("get_briefing", {}), scripted_model.structured(FINAL))
        send(first)
        build_briefing(db, tenant_id)
        send(second)

    for _ in range(WARMUP):
        baseline()
    settle(db)

    full: list[float] = []
    bare: list[float] = []
    trips: list[int] = []
    bare_trips: list[int] = []
    http_calls: list[int] = []
    engine_calls: list[int] = []
    for _ in range(turns):
        before, requests = db.stats.round_trips, len(server.requests)
        started = time.perf_counter()
        result = flowpilot_turn(server, db, tenant_id, executor)
        full.append(time.perf_counter() - started)
        trips.append(db.stats.round_trips - before)
        http_calls.append(len(server.requests) - requests)
        engine_calls.append(result.model_calls)

        before = db.stats.round_trips
        started = time.perf_counter()
        baseline()
        bare.append(time.perf_counter() - started)
        bare_trips.append(db.stats.round_trips - before)
    client.close()

    overhead = [f - b for f, b in zip(full, bare, strict=True)]
    return [
        {"bench": BENCH, "figure": "turn_median_ms", "value": median_ms(full), "turns": turns},
        {
            "bench": BENCH,
            "figure": "baseline_median_ms",
            "value": median_ms(bare),
            "what": "the same two model requests, direct, plus the bare get_briefing",
        },
        {
            "bench": BENCH,
            "figure": "engine_overhead_median_ms",
            "value": median_ms(overhead),
            "ratio_turn_to_baseline": round(statistics.median(full) / statistics.median(bare), 2),
        },
        {
            "bench": BENCH,
            "figure": "round_trips_per_turn",
            "value": statistics.median(trips),
            "baseline_round_trips": statistics.median(bare_trips),
            "counted_by": "db.stats",
        },
        {
            "bench": BENCH,
            "figure": "model_calls_per_turn",
            "value": statistics.median(http_calls),
            "engine_reported": statistics.median(engine_calls),
        },
    ]


@contextmanager
def phase_clock(totals: dict[str, float]) -> Iterator[None]:
    """Time the engine's phases by wrapping them (inclusive times; DB time overlaps others)."""
    from flowpilot.ai import openai_client, routing
    from flowpilot.db import transaction
    from flowpilot.reasoning import engine, state

    targets: list[tuple[str, Any, str]] = [
        ("resolve_ai_config", routing, "resolve_ai_config"),
        ("perceive", engine, "perceive"),
        ("model_complete", openai_client.OpenAIModelClient, "complete"),
        ("openai_client_setup", openai_client.OpenAIModelClient, "_client"),
        ("execute_skill", BoundExecutor, "execute"),
        ("checkpoint", state.RunState, "checkpoint"),
        ("db_statements", transaction.Tx, "_send"),
    ]
    originals = [(owner, name, getattr(owner, name)) for _, owner, name in targets]

    def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.perf_counter() - started
                totals[label] += spent
                if "label" in kwargs:  # a database statement: also by query name
                    totals[f"db:{kwargs['label']}"] += spent

        return wrapper

    for (label, owner, name), (_, _, original) in zip(targets, originals, strict=True):
        setattr(owner, name, timed(label, original))
    try:
        yield
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)


def measure_phases(
    server: ScriptedModelServer, db: Database, tenant_id: uuid.UUID, turns: int, profile: bool
) -> dict[str, Any]:
    """Where a turn's time goes: a separate pass, so the timed pass above stays unwrapped."""
    executor = BoundExecutor(db)
    totals: dict[str, float] = defaultdict(float)
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    with phase_clock(totals):
        if profiler is not None:
            profiler.enable()
        for _ in range(turns):
            flowpilot_turn(server, db, tenant_id, executor)
        if profiler is not None:
            profiler.disable()
    wall = time.perf_counter() - started
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(15)
        print(out.getvalue(), file=sys.stderr)
    line: dict[str, Any] = {
        "bench": BENCH,
        "figure": "phases_mean_ms",
        "turn": round(wall / turns * 1000, 3),
    }
    per_turn = {label: round(total / turns * 1000, 3) for label, total in totals.items()}
    line.update({k: v for k, v in per_turn.items() if not k.startswith("db:")})
    line["db_by_query"] = {k[3:]: v for k, v in per_turn.items() if k.startswith("db:")}
    line["note"] = "inclusive; db_statements overlaps perceive, execute_skill and checkpoint"
    return line


# -- bootstrap prompt with 537 skills ----------------------------------------------------------

AREAS: dict[str, list[str]] = {
    "invoice": ["overdue", "unpaid", "disputed", "partially paid"],
    "quote": ["open", "expiring", "accepted", "declined"],
    "booking": ["tomorrow's", "unconfirmed", "rescheduled", "cancelled"],
    "customer": ["new", "lapsed", "high-value", "unhappy"],
    "supplier": ["late", "preferred", "backup", "new"],
    "stock_item": ["low", "reserved", "damaged", "reordered"],
    "purchase_order": ["open", "late", "received", "unbilled"],
    "timesheet": ["missing", "unapproved", "overtime", "corrected"],
    "job": ["open", "delayed", "finished", "warranty"],
    "expense": ["unreceipted", "large", "recurring", "flagged"],
    "payment": ["failed", "pending", "refunded", "duplicate"],
    "review": ["new", "negative", "unanswered", "featured"],
    "campaign": ["running", "scheduled", "paused", "finished"],
    "lead": ["hot", "stale", "unassigned", "qualified"],
    "vehicle": ["due for service", "booked", "off the road", "leased"],
    "certificate": ["expiring", "missing", "renewed", "pending"],
    "contract": ["renewing", "expired", "draft", "signed"],
    "ticket": ["open", "escalated", "waiting", "resolved"],
    "shift": ["uncovered", "swapped", "overtime", "weekend"],
    "delivery": ["late", "scheduled", "failed", "partial"],
}
READ_VERBS = ["list", "find", "count", "summarize", "check", "compare", "review", "forecast"]
WRITE_VERBS = ["flag", "record", "tag", "schedule", "assign", "remind", "archive", "escalate"]
ASKS = [
    "how many {adj} {noun}s there are",
    "which {noun}s are {adj}",
    "for a list of {adj} {noun}s",
    "what changed with {adj} {noun}s this week",
    "whether any {noun} needs attention",
    "to see {adj} {noun}s by customer or by date",
]
PARAMETERS: dict[str, dict[str, Any]] = {
    "query": {"type": "string", "description": "Words to look for."},
    "status": {
        "type": ["string", "null"],
        "enum": ["open", "closed", "waiting", None],
        "description": "Only items in this state; null for all.",
    },
    "since_days": {
        "type": ["integer", "null"],
        "minimum": 1,
        "maximum": 365,
        "description": "Only the last N days; null for 30.",
    },
    "note": {"type": "string", "maxLength": 500, "description": "A short reason, in words."},
}
TEMPLATES: dict[str, tuple[str, list[str]]] = {
    "events": (
        "SELECT kind, summary, created_at FROM agent_events WHERE tenant_id = %(tenant_id)s"
        " AND created_at > now() - make_interval(days => coalesce(%(since_days)s, 30))"
        " AND summary ILIKE '%%' || %(query)s || '%%' ORDER BY created_at DESC",
        ["query", "since_days"],
    ),
    "memory": (
        "SELECT category, key, content FROM agent_memory WHERE tenant_id = %(tenant_id)s"
        " AND search @@ websearch_to_tsquery('english', %(query)s) ORDER BY importance DESC",
        ["query"],
    ),
    "objectives": (
        "SELECT goal, priority, status FROM agent_objectives WHERE tenant_id = %(tenant_id)s"
        " AND (%(status)s::text IS NULL OR status = %(status)s) ORDER BY priority DESC",
        ["status"],
    ),
    "record": (
        "INSERT INTO agent_events (tenant_id, kind, summary) VALUES (%(tenant_id)s, 'note',"
        " %(note)s) RETURNING event_id",
        ["note"],
    ),
}


def synthetic_pack(count: int, seed: int = 537) -> SkillPack:
    """``count`` realistic business skills: verb_noun names, Use when / NOT for descriptions,
    small strict parameter schemas, sql: templates or internal:memory_search handlers."""
    rng = random.Random(seed)
    taken = {"get_briefing", "memory_search", "memory_write", "reflect", "send_email"}
    skills: list[SkillSpec] = []
    templates: dict[str, SqlTemplate] = {}
    nouns = list(AREAS)
    while len(skills) < count:
        noun = rng.choice(nouns)
        adj = rng.choice(AREAS[noun])
        write = rng.random() < 0.25
        verb = rng.choice(WRITE_VERBS if write else READ_VERBS)
        name = f"{verb}_{noun}s"
        if name in taken:
            name = f"{verb}_{re.sub('[^a-z]', '', adj.split()[0])}_{noun}s"
        if name in taken:
            continue
        taken.add(name)
        words = noun.replace("_", " ")
        other = f"{rng.choice(READ_VERBS if write else WRITE_VERBS)}_{rng.choice(nouns)}s"
        asks = rng.sample(ASKS, 2)
        description = (
            f"{verb.capitalize()} {adj} {words}s for the business, with the details an owner "
            f"needs to act. Use when: the owner asks {asks[0].format(adj=adj, noun=words)}, or "
            f"{asks[1].format(adj=adj, noun=words)}. NOT for: changing anything outside "
            f"{words}s (use {other}) or the overall daily picture (use get_briefing)."
        )
        if write:
            shape = "record"
        else:
            shape = rng.choice(["events", "memory", "objectives", "memory_search"])
        if shape == "memory_search":
            handler = "internal:memory_search"
            props = ["query", "category", "limit"]
            schema: dict[str, Any] = {
                "query": PARAMETERS["query"],
                "category": {"type": ["string", "null"], "enum": ["fact", "lesson", None]},
                "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 20},
            }
        else:
            handler = f"sql:{name}"
            query, props = TEMPLATES[shape]
            templates[name] = SqlTemplate(query=query, max_rows=50)
            schema = {prop: PARAMETERS[prop] for prop in props}
        skills.append(
            SkillSpec(
                name=name,
                description=description,
                parameters={
                    "type": "object",
                    "additionalProperties": False,
                    "required": props,
                    "properties": schema,
                },
                handler=handler,
                category=noun,
                side_effects="write" if write else "read",
            )
        )
    return SkillPack(pack="bench_synthetic", skills=skills, sql_templates=templates)


def measure_prompt(db: Database) -> list[dict[str, Any]]:
    tenant = create_tenant(db, "Many Skills Co")
    seed_context(db, tenant.tenant_id)
    sync_packs(db, tenant.tenant_id, [synthetic_pack(SYNTHETIC_SKILLS)])
    rows = db.all(tenant.tenant_id, "skill_catalog")
    perception = perceive(db, tenant.tenant_id, QUESTION)
    prompt = estimate_tokens(perception.prompt)
    offered = estimate_tokens(json.dumps(perception.tools))
    naive = estimate_tokens(json.dumps([tool_definition(row) for row in rows]))
    ours = prompt + offered
    return [
        {
            "bench": BENCH,
            "figure": "bootstrap_tokens",
            "value": ours,
            "prompt": prompt,
            "offered_tools": offered,
            "offered": [skill.name for skill in perception.offered],
            "skills": len(rows),
            "layers": perception.layers,
            "target": PROMPT_TARGET,
            "ok": ours <= PROMPT_TARGET,
        },
        {
            "bench": BENCH,
            "figure": "naive_all_tools_tokens",
            "value": naive,
            "skills": len(rows),
            "ratio_ours_to_naive": round(ours / naive, 4),
        },
    ]


@contextmanager
def bench_stack() -> Iterator[tuple[ScriptedModelServer, Database, uuid.UUID]]:
    """A fresh database with a seeded tenant, and the engine pointed at an instant model."""
    postgres = TestPostgres.start()
    server = instant_model_server()
    try:
        postgres.build_template()
        point_engine_at(server)
        with postgres.clone() as db:
            tenant = create_tenant(db, "Harbor Plumbing")
            seed_context(db, tenant.tenant_id)
            yield server, db, tenant.tenant_id
    finally:
        server.stop()
        postgres.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--profile", action="store_true", help="cProfile top 15 to stderr")
    args = parser.parse_args()

    with bench_stack() as (server, db, tenant_id):
        for line in measure_turns(server, db, tenant_id, args.turns):
            emit(line)
        emit(measure_phases(server, db, tenant_id, min(args.turns, 50), args.profile))
        for line in measure_prompt(db):
            emit(line)


if __name__ == "__main__":
    main()
