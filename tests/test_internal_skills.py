"""The built-in internal skills, run through the ``internal:`` handler kind on real PostgreSQL."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from flowpilot.config import get_settings, reset_settings
from flowpilot.db import Database
from flowpilot.errors import FlowPilotError
from flowpilot.execute.models import Actor
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers import handler_problem
from flowpilot.skills.handlers.internal import run
from flowpilot.skills.internal.briefing import build_briefing
from flowpilot.skills.internal.email import list_mail
from flowpilot.skills.internal.memory import search_memory
from flowpilot.skills.spec import builtin_pack
from flowpilot.tenancy import NewTenant

SPECS = {spec.name: spec for spec in builtin_pack().skills}


def call(db: Database, tenant_id: uuid.UUID, skill: str, /, **arguments: Any) -> Any:
    """Run a built-in skill as the execute pipeline would, with its registry row."""
    spec = SPECS[skill]
    row = {"name": spec.name, "handler": spec.handler, "side_effects": spec.side_effects,
           "config": spec.config}  # fmt: skip
    ctx = SkillContext(
        db=db,
        settings=get_settings(),
        tenant_id=tenant_id,
        actor=Actor(type="user", id="test"),
        skill=row,
    )
    return run(ctx, arguments)


def sql(db: Database, tenant_id: uuid.UUID, statement: str, **params: Any) -> list[dict[str, Any]]:
    with db.transaction(tenant_id) as tx:
        return tx.sql(statement, params)


# --- memory ---------------------------------------------------------------------------------


def test_memory_write_inserts_and_upserts_by_key(db: Database, tenant: NewTenant) -> None:
    first = call(db, tenant.tenant_id, "memory_write", content="Lead time is 5 days", key="lead")
    again = call(
        db, tenant.tenant_id, "memory_write",
        content="Supplier lead time is now 7 days", key="lead", importance=0.9,
    )  # fmt: skip
    other = call(db, tenant.tenant_id, "memory_write", content="Lead time is 5 days", key=None)
    assert first["created"] is True and again == {"memory_id": first["memory_id"], "created": False}
    assert other["memory_id"] != first["memory_id"]
    rows = sql(
        db, tenant.tenant_id,
        "SELECT content, importance, category FROM agent_memory WHERE memory_id = %(id)s",
        id=first["memory_id"],
    )  # fmt: skip
    assert rows == [
        {"content": "Supplier lead time is now 7 days", "importance": pytest.approx(0.9),
         "category": "fact"}
    ]  # fmt: skip


def test_memory_search_ranks_relevant_recent_and_skips_expired_and_foreign(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    t = tenant.tenant_id
    call(db, t, "memory_write", content="The office closes at 5pm on Fridays")
    best = call(
        db, t, "memory_write", category="preference",
        content="Mrs Patel prefers invoices by email with 14 day payment terms",
    )  # fmt: skip
    numbered = call(db, t, "memory_write", content="Invoices are numbered by year")
    old = call(db, t, "memory_write", content="Mrs Patel paid her invoice by email last year")
    sql(
        db,
        t,
        "UPDATE agent_memory SET updated_at = now() - interval '300 days', "
        "created_at = now() - interval '300 days' WHERE memory_id = %(id)s",
        id=old["memory_id"],
    )
    expired = call(
        db, t, "memory_write", content="Patel invoice email terms expired", expires_in_days=1
    )
    sql(db, t, "UPDATE agent_memory SET expires_at = now() - interval '1 minute' "
        "WHERE memory_id = %(id)s", id=expired["memory_id"])  # fmt: skip
    foreign = call(
        db, other_tenant.tenant_id, "memory_write", content="Patel invoice email payment terms"
    )

    found = call(db, t, "memory_search", query="Patel invoice email payment terms", limit=None)
    ids = [r["memory_id"] for r in found["results"]]
    assert ids[0] == best["memory_id"]
    assert old["memory_id"] in ids and ids.index(old["memory_id"]) > 0
    assert expired["memory_id"] not in ids and foreign["memory_id"] not in ids
    top = found["results"][0]
    assert top["category"] == "preference" and top["score"] > 0
    assert isinstance(top["created_at"], str) and top["key"] is None

    only_facts = search_memory(db, t, "invoice", category="fact", limit=50)
    assert {r["memory_id"] for r in only_facts} == {old["memory_id"], numbered["memory_id"]}
    assert search_memory(db, t, "   ") == []
    assert search_memory(db, t, "the and of") == []  # only stop words: nothing to match


def test_recency_breaks_a_tie_between_equally_relevant_memories(
    db: Database, tenant: NewTenant
) -> None:
    t = tenant.tenant_id
    stale = call(db, t, "memory_write", content="Boiler service price is 90 pounds")
    fresh = call(db, t, "memory_write", content="Boiler service price is 95 pounds")
    sql(db, t, "UPDATE agent_memory SET updated_at = now() - interval '90 days' "
        "WHERE memory_id = %(id)s", id=stale["memory_id"])  # fmt: skip
    results = search_memory(db, t, "boiler service price")
    assert [r["memory_id"] for r in results] == [fresh["memory_id"], stale["memory_id"]]


# --- objectives -----------------------------------------------------------------------------


def test_objective_create_progress_and_complete(db: Database, tenant: NewTenant) -> None:
    t = tenant.tenant_id
    created = call(
        db, t, "objective_create",
        goal="Collect 20 new Google reviews", priority=None,
        success_criteria=["20 reviews with 4+ stars"],
        kpis=[{"name": "Reviews", "target": 20, "current": 3, "unit": "reviews"}],
        plan=["List happy customers", "Draft the request email", "Send requests"],
    )  # fmt: skip
    objective_id = created["objective_id"]
    assert created["priority"] == 50 and created["status"] == "open"
    assert created["progress"] == {
        "plan": [
            {"step": "List happy customers", "status": "pending"},
            {"step": "Draft the request email", "status": "pending"},
            {"step": "Send requests", "status": "pending"},
        ],
        "cursor": 0,
    }
    assert created["steps_total"] == 3 and created["next_step"] == "List happy customers"

    # Step 1 skipped first, so finishing step 0 moves the cursor past both.
    call(db, t, "objective_update_progress", objective_id=objective_id, step_index=1,
         step_status="skipped", note=None, kpi_updates=None)  # fmt: skip
    updated = call(
        db, t, "objective_update_progress", objective_id=objective_id, step_index=None,
        step_status="done", note="Found 25 customers",
        kpi_updates=[{"name": "reviews", "current": 7}],
    )  # fmt: skip
    assert [s["status"] for s in updated["progress"]["plan"]] == ["done", "skipped", "pending"]
    assert updated["progress"]["cursor"] == 2 and updated["next_step"] == "Send requests"
    assert updated["kpis"][0]["current"] == 7 and updated["kpis"][0]["target"] == 20
    assert updated["progress"]["notes"][-1]["note"] == "Found 25 customers"
    assert updated["steps_done"] == 2

    for i in range(25):
        call(db, t, "objective_update_progress", objective_id=objective_id, note=f"n{i}")
    notes = sql(db, t, "SELECT progress -> 'notes' AS n FROM agent_objectives")[0]["n"]
    assert len(notes) == 20 and notes[-1]["note"] == "n24"

    with pytest.raises(SkillFailed) as unknown_kpi:
        call(db, t, "objective_update_progress", objective_id=objective_id,
             kpi_updates=[{"name": "Revenue", "current": 1}])  # fmt: skip
    assert unknown_kpi.value.code == "unknown_kpi"
    with pytest.raises(SkillFailed) as bad_step:
        call(db, t, "objective_update_progress", objective_id=objective_id, step_index=9)
    assert bad_step.value.code == "step_out_of_range"

    done = call(db, t, "objective_complete", objective_id=objective_id, summary="24 reviews")
    assert done["status"] == "completed" and done["completed_at"] is not None
    assert done["progress"]["summary"] == "24 reviews" and done["already_completed"] is False
    assert call(db, t, "objective_complete", objective_id=objective_id)["already_completed"]
    with pytest.raises(SkillFailed) as closed:
        call(db, t, "objective_update_progress", objective_id=objective_id, note="late")
    assert closed.value.code == "objective_closed"

    kinds = [r["kind"] for r in sql(db, t, "SELECT kind FROM agent_events ORDER BY event_id")]
    assert kinds[0] == "objective_created" and kinds[-1] == "objective_completed"
    assert kinds.count("objective_progress") == 27 and kinds.count("objective_completed") == 1


@pytest.mark.parametrize("skill", ["objective_update_progress", "objective_complete"])
def test_unknown_or_foreign_objective_is_not_found(
    db: Database, tenant: NewTenant, other_tenant: NewTenant, skill: str
) -> None:
    foreign = call(db, other_tenant.tenant_id, "objective_create", goal="Globex secret plan")
    for objective_id in (str(uuid.uuid4()), "not-a-uuid", foreign["objective_id"]):
        with pytest.raises(SkillFailed) as failed:
            call(db, tenant.tenant_id, skill, objective_id=objective_id, note="x")
        assert failed.value.code == "objective_not_found"
    rows = sql(db, other_tenant.tenant_id, "SELECT status, progress FROM agent_objectives")
    assert rows == [{"status": "open", "progress": {"plan": [], "cursor": 0}}]


# --- briefing -------------------------------------------------------------------------------


def test_briefing_reflects_real_rows(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    t = tenant.tenant_id
    empty = call(db, t, "get_briefing")
    assert empty["approvals"]["pending"] == 0 and empty["objectives"] == []
    assert "Nothing needs your attention" in empty["summary"]

    call(db, t, "objective_create", goal="Win back lapsed customers", priority=80,
         kpis=[{"name": "Returning", "target": 10, "current": 2, "unit": None}],
         plan=["Find lapsed customers", "Send an offer"])  # fmt: skip
    objective = call(db, t, "objective_create", goal="Tidy the warehouse", priority=10)
    first = sql(db, t, "SELECT objective_id FROM agent_objectives WHERE priority = 80")[0]
    call(db, t, "objective_update_progress", objective_id=str(first["objective_id"]),
         step_index=0, step_status="done")  # fmt: skip
    sql(db, t, "INSERT INTO agent_approvals (tenant_id, skill, arguments, arguments_hash, "
        "requested_by) VALUES (%(t)s, 'send_email', '{}', 'h', '{}'), "
        "(%(t)s, 'http_request', '{}', 'h2', '{}')", t=t)  # fmt: skip
    sql(
        db,
        t,
        "INSERT INTO agent_approvals (tenant_id, skill, arguments, arguments_hash, "
        "requested_by, expires_at) VALUES (%(t)s, 'old', '{}', 'h3', '{}', now())",
        t=t,
    )
    sql(db, t, "UPDATE tenants SET daily_token_budget = 10000")
    sql(
        db,
        t,
        "INSERT INTO tenant_usage (tenant_id, day, tokens) "
        "VALUES (%(t)s, current_date, 2500), (%(t)s, current_date - 2, 99999)",
        t=t,
    )
    sql(db, t, "INSERT INTO audit_log (tenant_id, actor_type, actor_id, action, skill, outcome, "
        "error) VALUES (%(t)s, 'flowpilot', 'hb', 'execute', 'http_request', 'failed', "
        "'{\"message\": \"timed out\"}')", t=t)  # fmt: skip
    for outcome in ("negative", "no_effect", "success"):
        call(db, t, "reflect", outcome=outcome, critique=f"{outcome} result", skill="send_email")
    call(db, t, "reflect", outcome="negative", critique="once", skill="http_request")
    call(db, other_tenant.tenant_id, "objective_create", goal="Someone else's goal")

    briefing = build_briefing(db, t)
    assert briefing == call(db, t, "get_briefing") | {"generated_at": briefing["generated_at"]}
    approvals = briefing["approvals"]
    assert approvals["pending"] == 2
    assert {a["skill"] for a in approvals["top"]} == {"send_email", "http_request"}
    assert all(isinstance(a["expires_at"], str) for a in approvals["top"])
    goals = [(o["goal"], o["steps_done"], o["steps_total"]) for o in briefing["objectives"]]
    assert goals == [("Win back lapsed customers", 1, 2), ("Tidy the warehouse", 0, 0)]
    assert briefing["objectives"][0]["next_step"] == "Send an offer"
    assert briefing["objectives"][0]["kpis"][0]["name"] == "Returning"
    assert briefing["objectives"][1]["objective_id"] == objective["objective_id"]
    assert briefing["tokens"] == {"today": 2500, "budget": 10000, "percent_of_budget": 25.0}
    assert briefing["failures"]["count"] == 1
    assert briefing["failures"]["recent"][0]["error"] == "timed out"
    assert briefing["flagged_skills"] == [
        {"skill": "send_email", "bad_outcomes": 2, "last_critique": "no_effect result"}
    ]
    assert briefing["recent_events"][0]["kind"] == "objective_progress"
    assert len(briefing["recent_events"]) == 3
    summary = briefing["summary"]
    assert "2 approvals waiting" in summary and "1 failed action" in summary
    assert "Win back lapsed customers" in summary and "1 of 2 steps" in summary
    assert "send email skill keeps" in summary and "2,500 of its 10,000" in summary
    assert 3 <= summary.count(". ") + 1 <= 4
    assert "_" not in summary


def test_briefing_is_one_round_trip(db: Database, tenant: NewTenant) -> None:
    before = db.stats.round_trips
    build_briefing(db, tenant.tenant_id)
    assert db.stats.round_trips - before == 1


# --- signals, email, reflection ------------------------------------------------------------


def test_create_signal_records_a_flowpilot_signal(db: Database, tenant: NewTenant) -> None:
    created = call(
        db, tenant.tenant_id, "create_signal",
        title="Customer reports a leaking tap", body=None, kind="issue", project_id=None,
    )  # fmt: skip
    rows = sql(db, tenant.tenant_id, "SELECT source, kind, title, body, status FROM signals")
    assert rows[0]["source"] == "flowpilot" and rows[0]["kind"] == "issue"
    assert rows[0]["title"] == "Customer reports a leaking tap" and rows[0]["body"] == ""
    assert rows[0]["status"] in ("pending", "completed")
    assert created["status"] in ("pending", "completed") and uuid.UUID(created["signal_id"])
    with pytest.raises(FlowPilotError) as missing:
        call(db, tenant.tenant_id, "create_signal", title="x", project_id=str(uuid.uuid4()))
    assert missing.value.code == "project_not_found"


def test_send_email_locally_goes_to_the_mailbox(db: Database, tenant: NewTenant) -> None:
    result = call(
        db, tenant.tenant_id, "send_email",
        to="customer@example.com", subject="Your quote\r\nBcc: x@evil.test", body="Hello",
    )  # fmt: skip
    assert result["delivered_via"] == "mailbox" and result["provider_message_id"] is None
    mail = list_mail(db, tenant.tenant_id)
    assert [(m["mail_id"], m["recipient"], m["subject"]) for m in mail] == [
        (result["mail_id"], "customer@example.com", "Your quote Bcc: x@evil.test")
    ]
    with pytest.raises(SkillFailed) as bad:
        call(db, tenant.tenant_id, "send_email", to="a@b.com, c@d.com", subject="s", body="b")
    assert bad.value.code == "invalid_recipient"


@pytest.mark.usefixtures("aws")
def test_send_email_through_ses(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3

    monkeypatch.setenv("SENDER_EMAIL", "owner@acme.example")
    reset_settings()
    with pytest.raises(SkillFailed) as unverified:
        call(db, tenant.tenant_id, "send_email", to="c@example.com", subject="s", body="b")
    assert unverified.value.code == "email_rejected"
    assert list_mail(db, tenant.tenant_id) == []

    boto3.client("ses").verify_email_identity(EmailAddress="owner@acme.example")
    result = call(
        db, tenant.tenant_id, "send_email",
        to="customer@example.com", subject="Your quote", body="It is 120 pounds.",
    )  # fmt: skip
    assert result["delivered_via"] == "ses" and result["provider_message_id"]
    mail = list_mail(db, tenant.tenant_id)
    assert mail[0]["provider_message_id"] == result["provider_message_id"]
    sent = boto3.client("ses").get_send_quota()["SentLast24Hours"]
    assert sent == 1


def test_reflect_records_the_reflection_and_its_lesson(db: Database, tenant: NewTenant) -> None:
    t = tenant.tenant_id
    objective = call(db, t, "objective_create", goal="Reduce overdue invoices")
    result = call(
        db, t, "reflect", outcome="partial", critique="Two of five customers replied",
        lesson="Send invoice reminders in the morning", skill="send_email",
        objective_id=objective["objective_id"],
    )  # fmt: skip
    rows = sql(db, t, "SELECT outcome, skill, objective_id::text AS o, lesson, run_id "
               "FROM agent_reflections")  # fmt: skip
    assert rows == [
        {"outcome": "partial", "skill": "send_email", "o": objective["objective_id"],
         "lesson": "Send invoice reminders in the morning", "run_id": None}
    ]  # fmt: skip
    memory = search_memory(db, t, "invoice reminders", category="lesson")
    assert [m["memory_id"] for m in memory] == [result["lesson_memory_id"]]
    importance = sql(db, t, "SELECT importance FROM agent_memory")[0]["importance"]
    assert importance == pytest.approx(0.7)

    plain = call(db, t, "reflect", outcome="success", critique="Fine", lesson=None)
    assert plain["lesson_memory_id"] is None and plain["reflection_id"]
    with pytest.raises(SkillFailed) as missing:
        call(db, t, "reflect", outcome="success", critique="x", objective_id=str(uuid.uuid4()))
    assert missing.value.code == "objective_not_found"


# --- the pack -------------------------------------------------------------------------------


def _strict_problems(schema: dict[str, Any], path: str = "$") -> list[str]:
    """Where a schema breaks OpenAI strict mode's rules for objects (free-form ones aside)."""
    problems = []
    types = schema.get("type")
    is_object = types == "object" or (isinstance(types, list) and "object" in types)
    if is_object and "properties" in schema:
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
        if sorted(schema.get("required", [])) != sorted(schema["properties"]):
            problems.append(f"{path}: every property must be required")
        for name, sub in schema["properties"].items():
            problems += _strict_problems(sub, f"{path}.{name}")
    if "items" in schema:
        problems += _strict_problems(schema["items"], f"{path}[]")
    allowed = {"type", "properties", "required", "additionalProperties", "enum", "items",
               "anyOf", "description", "minimum", "maximum"}  # fmt: skip
    problems += [f"{path}: unsupported keyword {k}" for k in set(schema) - allowed]
    if isinstance(types, list) and "null" in types and "enum" in schema:
        if None not in schema["enum"]:
            problems.append(f"{path}: a nullable enum must list null")
    return problems


def test_builtin_pack_parses_and_every_handler_resolves() -> None:
    import jsonschema

    pack = builtin_pack()
    assert pack.pack == "builtin"
    assert set(SPECS) == {
        "memory_write", "memory_search", "objective_create", "objective_update_progress",
        "objective_complete", "get_briefing", "create_signal", "send_email", "http_request",
        "reflect",
    }  # fmt: skip
    for spec in pack.skills:
        assert spec.handler == f"internal:{spec.name}"
        assert handler_problem(spec.handler, spec.config) is None, spec.name
        assert len(spec.description) >= 30
        assert "Use when:" in spec.description and "NOT for:" in spec.description
        jsonschema.Draft202012Validator.check_schema(spec.parameters)
        assert spec.parameters["type"] == "object"
        assert _strict_problems(spec.parameters) == [], spec.name
    reads = {s.name for s in pack.skills if s.side_effects == "read"}
    assert reads == {"memory_search", "get_briefing"}
    approve = {s.name for s in pack.skills if s.effective_trust == "approve"}
    assert approve == {"send_email", "http_request"}


def test_strict_mode_nulls_validate_against_the_schemas() -> None:
    import jsonschema

    jsonschema.validate(
        {"content": "x", "category": None, "key": None, "importance": None,
         "expires_in_days": None},
        SPECS["memory_write"].parameters,
    )  # fmt: skip
    jsonschema.validate(
        {"objective_id": "x", "step_index": None, "step_status": None, "note": None,
         "kpi_updates": [{"name": "a", "current": 1}]},
        SPECS["objective_update_progress"].parameters,
    )  # fmt: skip
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "x"}, SPECS["memory_search"].parameters)


# --- the CLI --------------------------------------------------------------------------------


def _mail_cli(*argv: str) -> Any:
    import argparse

    from flowpilot.cli import mail_command

    parser = argparse.ArgumentParser(prog="flowpilot")
    mail_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["mail", *argv])
    return args.handler(args)


def test_mail_command_lists_the_only_tenants_mail(
    db: Database, tenant: NewTenant, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    call(db, tenant.tenant_id, "send_email", to="a@example.com", subject="Hi", body="Hello there")
    assert _mail_cli("--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert [m["recipient"] for m in listed] == ["a@example.com"]
    assert _mail_cli("--limit", "5") == 0
    assert "to a@example.com  [mailbox]" in capsys.readouterr().out


def test_mail_command_needs_a_tenant_when_there_are_several(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    from flowpilot.errors import InvalidRequest

    with pytest.raises(InvalidRequest) as needed:
        _mail_cli()
    assert needed.value.code == "tenant_needed"
    assert _mail_cli("--tenant", str(other_tenant.tenant_id), "--json") == 0
