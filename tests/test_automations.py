"""Automations: cron schedules, the store and its API, and the runner's once-only claims."""

from __future__ import annotations

import datetime as dt
import json
import threading
import uuid
from typing import Any

import pytest

from flowpilot.api.lambda_http import chat_handler
from flowpilot.automations import runner
from flowpilot.automations.cron import CronSchedule, next_after, parse_schedule
from flowpilot.automations.models import NewAutomation
from flowpilot.automations.runner import MODULE_OFF, AutomationRun, run_due
from flowpilot.automations.store import create_automation, list_automations, set_enabled
from flowpilot.cli.main import main
from flowpilot.db import Database
from flowpilot.errors import InvalidRequest
from flowpilot.tenancy import NewTenant, create_tenant
from flowpilot.testing import scripted_model as script
from flowpilot.testing.http import call
from flowpilot.testing.scripted_model import ScriptedModelServer

UTC = dt.UTC
NOTE = {"content": "Check the van's tyres", "category": None, "key": None}
NOTE_ARGS = {**NOTE, "importance": None, "expires_in_days": None}
EMAIL = {"to": "pat@example.com", "subject": "Weekly report", "body": "All good this week."}


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def rows(db: Database, sql: str, *params: Any) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return conn.execute(sql, params).fetchall()


def count(db: Database, sql: str, *params: Any) -> int:
    return int(rows(db, sql, *params)[0]["n"])


def auth(tenant: NewTenant) -> dict[str, str]:
    return {"authorization": f"Bearer {tenant.api_key}"}


def make(
    db: Database,
    tenant: NewTenant,
    name: str = "tyre check",
    *,
    kind: str = "cron",
    spec: str = "*/5 * * * *",
    skill: str = "memory_write",
    arguments: dict[str, Any] | None = None,
    executor: str = "platform",
) -> uuid.UUID:
    new = NewAutomation.model_validate(
        {
            "name": name,
            "trigger_kind": kind,
            "trigger_spec": spec,
            "skill": skill,
            "arguments": NOTE_ARGS if arguments is None else arguments,
            "executor": executor,
        }
    )
    return create_automation(db, tenant.tenant_id, new).automation_id


def make_due(db: Database, automation_id: uuid.UUID) -> dt.datetime:
    """Pretend the automation's time came a minute ago; returns that occurrence."""
    found = rows(
        db,
        "UPDATE automations SET next_run_at = date_trunc('minute', now()) - interval '1 minute'"
        " WHERE automation_id = %s RETURNING next_run_at",
        automation_id,
    )
    return found[0]["next_run_at"]


def automation(db: Database, automation_id: uuid.UUID) -> dict[str, Any]:
    return rows(db, "SELECT * FROM automations WHERE automation_id = %s", automation_id)[0]


def record_event(db: Database, tenant: NewTenant, kind: str) -> int:
    with db.transaction(tenant.tenant_id) as tx:
        found = tx.sql(
            "INSERT INTO agent_events (tenant_id, kind, summary) VALUES (%s, %s, %s)"
            " RETURNING event_id",
            (tenant.tenant_id, kind, f"something of kind {kind} happened"),
        )
    return int(found[0]["event_id"])


# --- cron ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        ("*/15 * * * *", "2024-01-31 12:07", "2024-01-31 12:15"),
        ("*/15 * * * *", "2024-01-31 12:15", "2024-01-31 12:30"),  # strictly after
        ("*/15 * * * *", "2024-01-31 12:14:59.999", "2024-01-31 12:15"),
        ("*/15 * * * *", "2024-12-31 23:50", "2025-01-01 00:00"),
        ("0 0 29 2 *", "2024-03-01 00:00", "2028-02-29 00:00"),
        ("0 0 29 2 *", "2096-03-01 00:00", "2104-02-29 00:00"),  # 2100 is no leap year
        ("0 0 31 * *", "2024-04-01 00:00", "2024-05-31 00:00"),  # April has no 31st
        ("59 23 31 12 *", "2024-12-31 23:59", "2025-12-31 23:59"),
        ("0 9 13 * MON", "2024-09-10 00:00", "2024-09-13 09:00"),  # the 13th (a Friday)...
        ("0 9 13 * MON", "2024-09-13 10:00", "2024-09-16 09:00"),  # ...or a Monday
        ("30 8 * * MON-FRI", "2024-09-13 09:00", "2024-09-16 08:30"),  # Friday -> Monday
        ("0 0 * * 7", "2024-09-13 12:00", "2024-09-15 00:00"),  # 7 is Sunday
        ("0 0 * * 0", "2024-09-13 12:00", "2024-09-15 00:00"),
        ("5 4 * * sun", "2024-09-15 04:05", "2024-09-22 04:05"),
        ("0 22 * * 1-5/2", "2024-09-16 22:00", "2024-09-18 22:00"),  # Mon, Wed, Fri
        ("0 12 1,15 JAN-MAR/2 *", "2024-01-20 00:00", "2024-03-01 12:00"),
        ("*/10 9-17 * * *", "2024-09-16 17:55", "2024-09-17 09:00"),
        ("0 0 */10 * *", "2024-02-22 00:00", "2024-03-01 00:00"),  # 1, 11, 21, 31
        ("@daily", "2024-02-28 13:00", "2024-02-29 00:00"),
        ("rate(5 minutes)", "2024-01-31 12:07:30", "2024-01-31 12:12"),
        ("rate(1 hour)", "2024-01-31 12:07", "2024-01-31 13:07"),
        ("rate(2 days)", "2024-02-28 00:00", "2024-03-01 00:00"),
    ],
)
def test_next_after(spec: str, after: str, expected: str) -> None:
    assert next_after(spec, at(after)) == at(expected)


def test_next_after_takes_any_timezone_and_answers_in_utc() -> None:
    paris = dt.timezone(dt.timedelta(hours=2))
    found = next_after("0 * * * *", dt.datetime(2024, 6, 1, 10, 30, tzinfo=paris))
    assert found == at("2024-06-01 09:00") and found.tzinfo == UTC


@pytest.mark.parametrize(
    "spec", ["*/7 3-5 * * *", "0 0 1,15 * 3", "15 10 * 2 MON-WED", "0 */6 31 * *"]
)
def test_next_after_agrees_with_checking_every_minute(spec: str) -> None:
    schedule = parse_schedule(spec)
    assert isinstance(schedule, CronSchedule)

    def fires(t: dt.datetime) -> bool:
        return (
            t.minute in schedule.minutes
            and t.hour in schedule.hours
            and t.month in schedule.months
            and schedule.day_matches(t.date())
        )

    t = at("2024-01-25 07:13")
    for _ in range(12):
        expected = t + dt.timedelta(minutes=1)
        while not fires(expected):
            expected += dt.timedelta(minutes=1)
        assert next_after(spec, t) == expected
        t = expected


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("61 * * * *", "minute: 61 is out of range 0-59"),
        ("* 24 * * *", "hour: 24 is out of range 0-23"),
        ("* * 0 * *", "day-of-month: 0 is out of range 1-31"),
        ("* * * 13 *", "month: 13 is out of range 1-12"),
        ("* * * * 8", "day-of-week: 8 is out of range 0-7"),
        ("* * * FOO *", "month: 'FOO' is not a number or a month name"),
        ("* * * * FUNDAY", "day-of-week: 'FUNDAY' is not a number or a day name"),
        ("*/0 * * * *", "minute: step '0' must be a whole number >= 1"),
        ("5-1 * * * *", "minute: range '5-1' runs backwards"),
        ("1,,2 * * * *", "minute: empty list item"),
        ("* * * *", "expected 5 fields"),
        ("0 0 30 2 *", "day-of-month: day 30 never occurs in February"),
        ("rate(0 minutes)", "at least 1"),
        ("rate(5 weeks)", "a rate reads like rate(5 minutes)"),
        ("@sometimes", "unknown shorthand"),
        ("   ", "the schedule is empty"),
    ],
)
def test_invalid_schedules_name_the_bad_field(spec: str, problem: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        next_after(spec, at("2024-01-01 00:00"))
    assert caught.value.code == "invalid_schedule"
    assert problem in caught.value.message, caught.value.message


# --- the store and its API ---------------------------------------------------------------


def test_create_and_list_over_http(db: Database, tenant: NewTenant) -> None:
    body = {
        "name": "Monday report",
        "trigger_kind": "cron",
        "trigger_spec": "0 8 * * MON",
        "skill": "send_email",
        "arguments": EMAIL,
        "executor": "platform",
    }
    created = call(chat_handler, "POST", "/automations", body=body, headers=auth(tenant))
    assert created.status == 201, created.body
    assert created.body["enabled"] is True and created.body["last_run_at"] is None
    next_run = dt.datetime.fromisoformat(created.body["next_run_at"])
    assert next_run > dt.datetime.now(UTC) and next_run.weekday() == 0 and next_run.hour == 8

    listed = call(chat_handler, "GET", "/automations", headers=auth(tenant))
    assert listed.status == 200 and [a["name"] for a in listed.body] == ["Monday report"]

    again = call(chat_handler, "POST", "/automations", body=body, headers=auth(tenant))
    assert again.status == 409 and again.error_code == "automation_exists"


@pytest.mark.parametrize(
    ("changes", "code", "words"),
    [
        ({"trigger_spec": "0 25 * * *"}, "invalid_schedule", "hour: 25"),
        ({"skill": "make_coffee"}, "unknown_skill", "make_coffee"),
        ({"arguments": {"to": "pat@example.com"}}, "invalid_arguments", "do not fit"),
    ],
)
def test_create_refuses_what_could_never_run(
    db: Database, tenant: NewTenant, changes: dict[str, Any], code: str, words: str
) -> None:
    body = {
        "name": "report",
        "trigger_kind": "cron",
        "trigger_spec": "0 8 * * *",
        "skill": "send_email",
        "arguments": EMAIL,
        **changes,
    }
    reply = call(chat_handler, "POST", "/automations", body=body, headers=auth(tenant))
    assert reply.status == 400 and reply.error_code == code, reply.body
    assert words in reply.body["error"]["message"]
    assert list_automations(db, tenant.tenant_id) == []


def test_a_signal_trigger_has_no_schedule_and_flowpilot_may_leave_arguments_open(
    db: Database, tenant: NewTenant
) -> None:
    body = {
        "name": "welcome leads",
        "trigger_kind": "signal",
        "trigger_spec": "lead",
        "skill": "send_email",
        "arguments": {"subject": "Welcome"},
        "executor": "flowpilot",
    }
    reply = call(chat_handler, "POST", "/automations", body=body, headers=auth(tenant))
    assert reply.status == 201, reply.body
    assert reply.body["next_run_at"] is None and reply.body["executor"] == "flowpilot"


def test_enable_disable_and_delete_over_http(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    automation_id = make(db, tenant)
    path = f"/automations/{automation_id}"
    off = call(chat_handler, "POST", f"{path}/disable", headers=auth(tenant))
    assert off.status == 200 and off.body["enabled"] is False

    make_due(db, automation_id)  # a stale time from before it was switched off...
    on = call(chat_handler, "POST", f"{path}/enable", headers=auth(tenant))
    assert on.status == 200 and on.body["enabled"] is True
    # ...is not caught up on: it resumes from its next time.
    assert dt.datetime.fromisoformat(on.body["next_run_at"]) > dt.datetime.now(UTC)

    # Another tenant cannot see, switch or delete it.
    for method, suffix in (("GET", ""), ("POST", "/disable"), ("DELETE", "")):
        foreign = call(chat_handler, method, path + suffix, headers=auth(other_tenant))
        assert foreign.status == 404 and foreign.error_code == "automation_not_found"
    assert call(chat_handler, "GET", "/automations", headers=auth(other_tenant)).body == []

    assert call(chat_handler, "DELETE", path, headers=auth(tenant)).status == 204
    assert call(chat_handler, "DELETE", path, headers=auth(tenant)).status == 404
    assert call(chat_handler, "GET", "/automations", headers=auth(tenant)).body == []


def test_the_api_needs_a_credential(db: Database) -> None:
    assert call(chat_handler, "GET", "/automations").status == 401


# --- the runner ----------------------------------------------------------------------------


def heartbeats_at_once(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> list[AutomationRun]:
    """run_due from two threads, both holding the automation as due before either claims."""
    barrier = threading.Barrier(2, timeout=10)
    claim = runner._claim

    def claim_together(*args: Any) -> list[str]:
        barrier.wait()
        return claim(*args)

    monkeypatch.setattr(runner, "_claim", claim_together)
    results: list[list[AutomationRun]] = []
    errors: list[BaseException] = []

    def heartbeat() -> None:
        try:
            results.append(run_due(db, tenant.tenant_id, module_enabled=True))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=heartbeat) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    monkeypatch.setattr(runner, "_claim", claim)
    assert not errors and len(results) == 2
    return [run for result in results for run in result]


def test_a_due_platform_automation_runs_once_under_two_concurrent_heartbeats(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    automation_id = make(db, tenant)
    occurrence = make_due(db, automation_id)

    [run] = heartbeats_at_once(db, tenant, monkeypatch)
    assert run.outcome == "executed" and run.executor_used == "platform"
    assert run.occurrence == occurrence.isoformat()

    assert count(db, "SELECT count(*) AS n FROM agent_memory WHERE content = %s", NOTE["content"])
    assert count(db, "SELECT count(*) AS n FROM agent_memory") == 1
    assert count(db, "SELECT count(*) AS n FROM audit_log WHERE outcome = 'executed'") == 1
    row = automation(db, automation_id)
    assert row["next_run_at"] > occurrence and row["next_run_at"] > dt.datetime.now(UTC)
    assert row["next_run_at"].minute % 5 == 0
    assert row["last_run_at"] is not None and row["last_outcome"] == "executed"
    [event] = rows(db, "SELECT summary, payload FROM agent_events WHERE kind = 'automation_run'")
    assert event["summary"] == "Automation 'tyre check' ran memory write."
    assert event["payload"]["automation_id"] == str(automation_id)

    assert run_due(db, tenant.tenant_id, module_enabled=True) == []  # nothing due any more


def test_an_event_reaction_runs_once_under_two_concurrent_heartbeats(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(db, tenant, "note leads", kind="event", spec="lead_captured")
    event_id = record_event(db, tenant, "lead_captured")
    [run] = heartbeats_at_once(db, tenant, monkeypatch)
    assert run.outcome == "executed" and run.occurrence == f"event:{event_id}"
    assert count(db, "SELECT count(*) AS n FROM agent_memory") == 1


def test_a_retried_occurrence_never_executes_twice(db: Database, tenant: NewTenant) -> None:
    automation_id = make(db, tenant)
    occurrence = make_due(db, automation_id)
    [first] = run_due(db, tenant.tenant_id, module_enabled=True)
    # A crash after execute but before the claim stuck: the same occurrence comes round again.
    rows(db, "UPDATE automations SET next_run_at = %s RETURNING 1", occurrence)
    [again] = run_due(db, tenant.tenant_id, module_enabled=True)
    assert first.outcome == again.outcome == "executed"
    assert count(db, "SELECT count(*) AS n FROM agent_memory") == 1


def test_an_approve_skill_waits_for_approval_and_sends_nothing(
    db: Database, tenant: NewTenant
) -> None:
    automation_id = make(db, tenant, "weekly report", skill="send_email", arguments=EMAIL)
    make_due(db, automation_id)
    [run] = run_due(db, tenant.tenant_id, module_enabled=True)
    assert run.outcome == "pending_approval" and run.approval_id is not None
    assert count(db, "SELECT count(*) AS n FROM mailbox") == 0
    [approval] = rows(db, "SELECT status, skill, requested_by FROM agent_approvals")
    assert approval["status"] == "pending" and approval["skill"] == "send_email"
    assert approval["requested_by"] == {"type": "automation", "id": "weekly report"}
    assert automation(db, automation_id)["last_outcome"] == "pending_approval"


def test_module_off_a_flowpilot_automation_falls_back_to_the_platform(
    db: Database,
) -> None:
    # A workspace without the FlowPilot module: the platform still runs its skills.
    plain = create_tenant(db, "Plain Workspace")
    complete = make(db, plain, "complete note", executor="flowpilot")
    partial = make(db, plain, "open note", executor="flowpilot", arguments={"content": "x"})
    make_due(db, complete)
    make_due(db, partial)
    runs = {r.name: r for r in run_due(db, plain.tenant_id, module_enabled=False)}

    assert runs["complete note"].outcome == "executed"
    assert runs["complete note"].executor_used == "platform"
    assert runs["open note"].outcome == "skipped" and runs["open note"].reason == MODULE_OFF
    assert runs["open note"].executor_used is None
    assert count(db, "SELECT count(*) AS n FROM agent_memory") == 1
    assert count(db, "SELECT count(*) AS n FROM agent_runs") == 0  # no engine, no model
    assert automation(db, partial)["last_outcome"] == f"skipped: {MODULE_OFF}"
    summaries = [r["summary"] for r in rows(db, "SELECT summary FROM agent_events")]
    assert f"Automation 'open note' was skipped: {MODULE_OFF}." in summaries


def test_module_on_a_flowpilot_automation_runs_through_the_engine(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    automation_id = make(db, tenant, executor="flowpilot", arguments={"content": "Tyres"})
    make_due(db, automation_id)
    model.queue(
        script.tool_call("memory_write", {**NOTE_ARGS, "content": "Tyres checked"}),
        script.structured({"answer": "Noted.", "main_claim": "Noted", "limitations": []}),
    )
    [run] = run_due(db, tenant.tenant_id, module_enabled=True)
    assert run.outcome == "executed" and run.executor_used == "flowpilot"
    assert run.run_id is not None
    [agent_run] = rows(db, "SELECT trigger, status FROM agent_runs")
    assert agent_run == {"trigger": "automation", "status": "completed"}
    asked = model.requests[0]["messages"][-1]["content"]
    assert asked == "Automation 'tyre check': run memory_write with content Tyres"
    [event] = rows(db, "SELECT run_id FROM agent_events WHERE kind = 'automation_run'")
    assert event["run_id"] == run.run_id


def test_a_flowpilot_automation_counts_as_executed_only_when_its_skill_ran(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    automation_id = make(
        db, tenant, "mail", skill="send_email", arguments=EMAIL, executor="flowpilot"
    )
    make_due(db, automation_id)
    model.queue(
        script.tool_call("get_briefing", {}),
        script.structured({"answer": "All quiet.", "main_claim": "All quiet", "limitations": []}),
    )
    [run] = run_due(db, tenant.tenant_id, module_enabled=True)
    assert run.outcome == "failed"
    assert run.reason == "FlowPilot finished without running send_email (it ran get_briefing)"
    assert count(db, "SELECT count(*) AS n FROM mailbox") == 0


def test_an_event_trigger_fires_once_per_new_matching_event(
    db: Database, tenant: NewTenant
) -> None:
    record_event(db, tenant, "lead_captured")  # before the automation existed: ignored
    automation_id = make(db, tenant, "note leads", kind="event", spec="lead_captured")
    # Another automation reacts to automation runs, but never to its own.
    make(db, tenant, "log runs", kind="event", spec="automation_run")
    assert automation(db, automation_id)["next_run_at"] is None
    assert run_due(db, tenant.tenant_id, module_enabled=True) == []

    first = record_event(db, tenant, "lead_captured")
    record_event(db, tenant, "something_else")
    runs = run_due(db, tenant.tenant_id, module_enabled=True)
    assert [(r.name, r.occurrence) for r in runs] == [("note leads", f"event:{first}")]
    # "note leads" recorded an automation_run event, which "log runs" reacts to, once.
    [chained] = run_due(db, tenant.tenant_id, module_enabled=True)
    assert chained.name == "log runs" and chained.outcome == "executed"
    assert run_due(db, tenant.tenant_id, module_enabled=True) == []

    second, third = (
        record_event(db, tenant, "lead_captured"),
        record_event(db, tenant, "lead_captured"),
    )
    runs = [r for r in run_due(db, tenant.tenant_id, module_enabled=True) if r.name == "note leads"]
    assert [r.occurrence for r in runs] == [f"event:{second}", f"event:{third}"]
    assert all(r.outcome == "executed" for r in runs)


def test_a_signal_trigger_fires_for_signals_of_its_kind(db: Database, tenant: NewTenant) -> None:
    make(db, tenant, "note leads", kind="signal", spec="lead")
    with db.transaction(tenant.tenant_id) as tx:
        tx.sql(
            "INSERT INTO signals (tenant_id, kind, title) VALUES (%s, 'lead', 'New lead'),"
            " (%s, 'issue', 'Broken tap')",
            (tenant.tenant_id, tenant.tenant_id),
        )
    [run] = run_due(db, tenant.tenant_id, module_enabled=True)
    assert run.occurrence is not None and run.occurrence.startswith("signal:")
    assert run_due(db, tenant.tenant_id, module_enabled=True) == []


def test_re_enabled_triggers_do_not_replay_what_they_missed(
    db: Database, tenant: NewTenant
) -> None:
    automation_id = make(db, tenant, "note leads", kind="event", spec="lead_captured")
    set_enabled(db, tenant.tenant_id, automation_id, False)
    record_event(db, tenant, "lead_captured")
    assert run_due(db, tenant.tenant_id, module_enabled=True) == []
    set_enabled(db, tenant.tenant_id, automation_id, True)
    assert run_due(db, tenant.tenant_id, module_enabled=True) == []


def test_one_broken_automation_does_not_stop_the_others(db: Database, tenant: NewTenant) -> None:
    broken = make(db, tenant, "broken")
    rows(
        db,
        "UPDATE automations SET trigger_spec = 'every tuesday'"
        " WHERE automation_id = %s RETURNING 1",
        broken,
    )
    good = make(db, tenant, "good")
    make_due(db, broken)
    make_due(db, good)
    runs = {r.name: r for r in run_due(db, tenant.tenant_id, module_enabled=True)}
    assert runs["good"].outcome == "executed"
    assert runs["broken"].outcome == "failed"
    assert "schedule is invalid" in (runs["broken"].reason or "")
    # Stopped, rather than failing again on every heartbeat.
    assert automation(db, broken)["next_run_at"] is None
    assert run_due(db, tenant.tenant_id, module_enabled=True) == []


def test_another_tenants_automations_never_run_or_list(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    theirs = make(db, other_tenant, "their note")
    make_due(db, theirs)
    assert run_due(db, tenant.tenant_id, module_enabled=True) == []
    assert list_automations(db, tenant.tenant_id) == []
    assert automation(db, theirs)["last_run_at"] is None
    assert count(db, "SELECT count(*) AS n FROM agent_memory") == 0
    [run] = run_due(db, other_tenant.tenant_id, module_enabled=True)
    assert run.name == "their note"


# --- the CLI -------------------------------------------------------------------------------


def test_cli_create_list_disable_delete(
    db: Database, tenant: NewTenant, capsys: pytest.CaptureFixture[str]
) -> None:
    given = ["--tenant", str(tenant.tenant_id), "--json"]
    create = ["automations", "create", "nightly", "--skill", "memory_write", "--cron", "0 2 * * *"]
    assert main([*create, "--arguments", json.dumps(NOTE_ARGS), *given]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["name"] == "nightly" and created["next_run_at"].endswith("02:00:00Z")

    assert main(["automations", "disable", created["automation_id"], *given]) == 0
    assert json.loads(capsys.readouterr().out)["enabled"] is False

    assert main(["automations", "list", "--tenant", str(tenant.tenant_id)]) == 0
    line = capsys.readouterr().out
    assert "off nightly: memory_write (platform) [0 2 * * *]" in line

    bad = ["automations", "create", "x", "--skill", "memory_write", "--cron", "0 2 * *"]
    assert main([*bad, *given]) == 2
    assert "expected 5 fields" in capsys.readouterr().err

    assert main(["automations", "delete", created["automation_id"], *given]) == 0
    assert list_automations(db, tenant.tenant_id) == []
