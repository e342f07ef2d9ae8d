"""The heartbeat on real PostgreSQL: leases, guards, idle ticks, objective steps, reflection."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

from flowpilot.config import reset_settings
from flowpilot.db import Database, as_json
from flowpilot.execute import approvals
from flowpilot.heartbeat.models import TickReport
from flowpilot.heartbeat.scheduler import run_heartbeat, run_scheduled
from flowpilot.heartbeat.tick import tick
from flowpilot.local.invoke import invoke_function
from flowpilot.tenancy import NewTenant, create_tenant
from flowpilot.testing import scripted_model as script
from flowpilot.testing.events import load_event
from flowpilot.testing.scripted_model import ScriptedModelServer

NOTE = {"content": "Called the three newest leads", "category": "working", "key": None,
        "importance": None, "expires_in_days": None}  # fmt: skip
EMAIL = {"to": "lead@example.com", "subject": "Following up", "body": "Still interested?"}


def rows(db: Database, sql: str, *params: Any) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return conn.execute(sql, params).fetchall()


def objective(db: Database, tenant: NewTenant, goal: str, steps: list[str]) -> uuid.UUID:
    progress = {"plan": [{"step": s, "status": "pending"} for s in steps], "cursor": 0}
    row = rows(
        db,
        "INSERT INTO agent_objectives (tenant_id, goal, priority, progress, kpis)"
        " VALUES (%s, %s, 80, %s, %s) RETURNING objective_id",
        tenant.tenant_id, goal, as_json(progress),
        as_json([{"name": "notes written", "target": 5, "current": 0, "skill": "memory_write"}]),
    )  # fmt: skip
    return row[0]["objective_id"]


def test_an_idle_tenant_ticks_idle_with_no_model_call(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    report = tick(db, tenant.tenant_id)
    assert (report.outcome, report.model_calls, report.tokens) == ("idle", 0, 0)
    assert model.requests == []
    assert rows(db, "SELECT outcome FROM heartbeat_ticks") == [{"outcome": "idle"}]
    assert rows(db, "SELECT count(*) AS n FROM agent_runs")[0]["n"] == 0


def test_three_overlapping_ticks_one_works_two_are_busy_at_once(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    objective(db, tenant, "Keep notes on new leads", ["Write a note about the newest leads"])
    model.queue(
        script.delay(1.0, script.tool_call("memory_write", NOTE)), script.final_answer("Noted.")
    )
    barrier = threading.Barrier(3)
    reports: list[tuple[TickReport, float]] = []

    def run() -> None:
        barrier.wait()
        started = time.perf_counter()
        report = tick(db, tenant.tenant_id)
        reports.append((report, time.perf_counter() - started))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    outcomes = sorted(r.outcome for r, _ in reports)
    assert outcomes == ["busy", "busy", "executed"]
    assert all(seconds < 1.0 for r, seconds in reports if r.outcome == "busy")
    assert rows(db, "SELECT count(*) AS n FROM agent_runs")[0]["n"] == 1


def test_a_write_skill_tick_reflects_remembers_and_updates_progress(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    goal = objective(db, tenant, "Keep notes on new leads", ["Write a note", "Review notes"])
    model.queue(
        script.tool_call("memory_write", NOTE), script.final_answer("I noted the newest leads.")
    )
    report = tick(db, tenant.tenant_id)
    assert report.outcome == "executed" and report.skill == "memory_write"
    assert report.objective_id == goal and report.model_calls == 2
    [reflection] = rows(db, "SELECT outcome, skill, critique, objective_id FROM agent_reflections")
    assert reflection["outcome"] == "success" and reflection["objective_id"] == goal
    lessons = rows(db, "SELECT content FROM agent_memory WHERE category = 'lesson'")
    assert lessons and "memory write" in lessons[0]["content"].lower()
    [row] = rows(db, "SELECT progress, kpis, status, locked_until FROM agent_objectives")
    assert [s["status"] for s in row["progress"]["plan"]] == ["done", "pending"]
    assert row["progress"]["cursor"] == 1 and row["locked_until"] is None
    assert row["kpis"][0]["current"] == 1 and row["status"] == "open"
    # The lesson reaches the next bootstrap.
    from flowpilot.reasoning.bootstrap import perceive

    assert "works for this kind of step" in perceive(db, tenant.tenant_id, "leads").prompt


def test_an_approve_skill_waits_then_the_next_tick_follows_through_once(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    objective(db, tenant, "Follow up with leads", ["Email the newest lead"])
    model.queue(script.tool_call("send_email", EMAIL))
    first = tick(db, tenant.tenant_id)
    assert first.outcome == "waiting_approval" and first.skill == "send_email"
    [pending] = rows(db, "SELECT approval_id FROM agent_approvals WHERE status = 'pending'")
    approvals.decide(db, tenant.tenant_id, pending["approval_id"], approve=True, by="owner")

    model.queue(script.final_answer("I emailed the lead."))  # the paused run resumes to its answer
    model.queue(script.final_answer("Nothing more to do."))  # the objective's next look
    second = tick(db, tenant.tenant_id)
    assert second.outcome == "executed"
    assert second.prepasses.get("approvals_followed_through") == 1
    assert rows(db, "SELECT count(*) AS n FROM mailbox")[0]["n"] == 1
    statuses = [r["status"] for r in rows(db, "SELECT status FROM agent_runs ORDER BY started_at")]
    assert statuses[0] == "completed"
    assert rows(db, "SELECT outcome FROM agent_reflections")[0]["outcome"] == "success"

    model.queue(script.final_answer("Nothing more to do."))
    tick(db, tenant.tenant_id)
    assert rows(db, "SELECT count(*) AS n FROM mailbox")[0]["n"] == 1


def test_repeated_failures_back_off(db: Database, tenant: NewTenant) -> None:
    objective(db, tenant, "Anything", [])
    for _ in range(3):
        rows(db, "INSERT INTO heartbeat_ticks (tenant_id, outcome) VALUES (%s, 'failed')"
             " RETURNING tick_id", tenant.tenant_id)  # fmt: skip
    report = tick(db, tenant.tenant_id)
    assert report.outcome == "skipped" and "backing off after 3 failed ticks" in (
        report.reason or ""
    )
    assert rows(db, "SELECT count(*) AS n FROM agent_runs")[0]["n"] == 0


def test_a_spent_budget_skips_with_its_reason(db: Database, tenant: NewTenant) -> None:
    objective(db, tenant, "Anything", [])
    rows(db, "UPDATE tenants SET daily_token_budget = 0 RETURNING tenant_id")
    report = tick(db, tenant.tenant_id)
    assert report.outcome == "skipped" and "token budget is spent" in (report.reason or "")


def test_a_disabled_module_skips(db: Database) -> None:
    tenant = create_tenant(db, "Quiet Co")  # the FlowPilot module was never switched on
    objective(db, tenant, "Anything", [])
    report = tick(db, tenant.tenant_id)
    assert report.outcome == "skipped" and "disabled" in (report.reason or "")
    assert run_heartbeat(db) == []  # and the scheduler does not even pick it


def test_the_heartbeat_function_ticks_due_tenants_from_the_scheduler_event(
    db: Database, tenant: NewTenant
) -> None:
    objective(db, tenant, "Keep an eye on what needs attention", ["Check the briefing"])
    response = invoke_function("HeartbeatFunction", load_event("heartbeat_schedule"))
    assert response["ok"] is True and response["fanned_out"] == 0
    [ticked] = response["ticks"]
    assert ticked["tenant_id"] == str(tenant.tenant_id)
    assert ticked["outcome"] == "executed" and ticked["skill"] == "get_briefing"
    assert ticked["model_calls"] >= 1
    # A read that did its step moves the plan on; a critique is owed only for writes.
    [row] = rows(db, "SELECT progress, status FROM agent_objectives")
    assert row["progress"]["plan"][0]["status"] == "done" and row["status"] == "completed"
    assert rows(db, "SELECT count(*) AS n FROM agent_reflections")[0]["n"] == 0


def test_beyond_a_handful_of_tenants_ticks_fan_out(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenants = [create_tenant(db, f"T{i}", modules=("flowpilot",)) for i in range(3)]
    for t in tenants:
        objective(db, t, "Anything", [])
    monkeypatch.setenv("FLOWPILOT_HEARTBEAT_FANOUT", "2")
    monkeypatch.setenv("HEARTBEAT_FUNCTION", "stack-heartbeat")
    reset_settings()
    handed: list[uuid.UUID] = []
    run = run_scheduled(db, fan_out=handed.append)
    assert run.fanned_out == 3 and run.ticks == []
    assert sorted(handed) == sorted(t.tenant_id for t in tenants)


def test_the_demo_tenant_works_on_its_own_offline(db: Database) -> None:
    from flowpilot.local.demo import seed_demo

    seeded = seed_demo(db)
    tenant_id = uuid.UUID(seeded["tenant_id"])
    report = tick(db, tenant_id)  # no model configured: the offline reasoner drives it
    assert report.outcome == "executed", report
    assert report.skill == "memory_write" and report.model_calls >= 1
    [row] = rows(
        db, "SELECT progress, kpis FROM agent_objectives WHERE priority = 80"
    )  # the highest-priority objective moved forward
    assert row["progress"]["plan"][0]["status"] == "done"
    assert row["kpis"][0]["current"] == 1
    assert rows(db, "SELECT count(*) AS n FROM agent_reflections")[0]["n"] == 1


def test_with_the_module_off_automations_still_run_on_the_platform(db: Database) -> None:
    from flowpilot.automations.models import NewAutomation
    from flowpilot.automations.store import create_automation

    tenant = create_tenant(db, "Off Co")  # FlowPilot module off
    note = dict(NOTE, content="Daily stock check done")
    create_automation(
        db,
        tenant.tenant_id,
        NewAutomation(name="stock note", trigger_kind="cron", trigger_spec="rate(5 minutes)",
                      skill="memory_write", arguments=note, executor="flowpilot"),
    )  # fmt: skip
    rows(db, "UPDATE automations SET next_run_at = now() - interval '1 minute' RETURNING 1")
    [report] = run_heartbeat(db)
    assert report.outcome == "skipped" and "disabled" in (report.reason or "")
    assert "automations run" in (report.reason or "")
    notes = rows(db, "SELECT content FROM agent_memory WHERE category = 'working'")
    assert notes == [{"content": "Daily stock check done"}]
    assert rows(db, "SELECT count(*) AS n FROM agent_runs")[0]["n"] == 0  # no engine run


def test_progress_a_skill_wrote_during_the_tick_is_kept(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    goal = objective(db, tenant, "Grow rebookings", ["Record this week's rebookings"])
    update = {"objective_id": str(goal), "step_index": None, "step_status": None,
              "note": "Rebookings counted", "kpi_updates": [{"name": "notes written",
                                                             "current": 4}]}  # fmt: skip
    model.queue(script.tool_call("objective_update_progress", update), script.final_answer("Done."))
    report = tick(db, tenant.tenant_id)
    assert report.outcome == "executed"
    [row] = rows(db, "SELECT progress, kpis FROM agent_objectives")
    assert row["kpis"][0]["current"] == 4  # the skill's write survived the tick's own update
    assert any("Rebookings counted" in n.get("note", "") for n in row["progress"]["notes"])


def test_a_resumed_heartbeat_run_keeps_its_one_action_limit_and_is_not_interrupted(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    objective(db, tenant, "Follow up with leads", ["Email the newest lead"])
    model.queue(script.tool_call("send_email", EMAIL))
    assert tick(db, tenant.tenant_id).outcome == "waiting_approval"
    rows(db, "UPDATE agent_runs SET started_at = now() - interval '1 hour',"
         " claimed_at = now() - interval '1 hour' RETURNING 1")  # fmt: skip
    [pending] = rows(db, "SELECT approval_id FROM agent_approvals")
    # After approval the model tries to do more; the heartbeat's one execution is spent.
    model.queue(script.tool_call("memory_write", NOTE), script.final_answer("Emailed."))
    from flowpilot.reasoning.decisions import decide

    decide(db, tenant.tenant_id, pending["approval_id"], approve=True, by="owner")
    [run] = rows(db, "SELECT status FROM agent_runs")
    assert run["status"] == "completed"
    assert (
        rows(db, "SELECT count(*) AS n FROM agent_memory WHERE category = 'working'")[0]["n"] == 0
    )


def test_an_approval_stuck_executing_fails_and_its_run_resumes(
    db: Database, tenant: NewTenant, model: ScriptedModelServer
) -> None:
    objective(db, tenant, "Follow up with leads", ["Email the newest lead"])
    model.queue(script.tool_call("send_email", EMAIL))
    assert tick(db, tenant.tenant_id).outcome == "waiting_approval"
    rows(db, "UPDATE agent_approvals SET status = 'executing',"
         " claimed_at = now() - interval '1 hour' RETURNING 1")  # fmt: skip
    model.queue(script.final_answer("The email could not be confirmed."))
    model.queue(script.final_answer("Nothing more to do."))
    report = tick(db, tenant.tenant_id)
    assert report.prepasses.get("approvals_interrupted") == 1
    assert rows(db, "SELECT status FROM agent_approvals")[0]["status"] == "failed"
    assert rows(db, "SELECT count(*) AS n FROM mailbox")[0]["n"] == 0  # never run twice
    statuses = {r["status"] for r in rows(db, "SELECT status FROM agent_runs")}
    assert "waiting_approval" not in statuses
