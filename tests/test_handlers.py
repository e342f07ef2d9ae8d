"""The four Lambda handlers, called through the docker-free invoke harness with real events."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flowpilot.db import Database
from flowpilot.local.invoke import invoke_function
from flowpilot.signals.intake import create_signal
from flowpilot.signals.models import NewSignal
from flowpilot.tenancy import NewTenant
from flowpilot.testing.events import load_event

ROOT = Path(__file__).resolve().parents[1]


def test_chat_completion_answers_health_through_mangum(db: Database) -> None:
    response = invoke_function("ChatCompletionFunction", load_event("chat_completion_health"))
    assert response["statusCode"] == 200
    assert json.loads(response["body"])["database"] == "ok"


def test_agent_execute_answers_the_direct_invoke_contract(db: Database, tenant: NewTenant) -> None:
    event = load_event("agent_execute_invoke")  # its tenant does not exist here
    refused = invoke_function("AgentExecuteFunction", event)
    assert set(refused) >= {"status", "result", "approval_id", "error"}
    assert (refused["status"], refused["error"]["code"]) == ("refused", "unknown_tenant")
    event["tenant_id"] = str(tenant.tenant_id)
    event["arguments"] = {"query": "pricing", "category": None, "limit": None}
    executed = invoke_function("AgentExecuteFunction", event)
    assert executed["status"] == "executed" and executed["result"] == {"results": []}


def test_heartbeat_ticks_nothing_when_no_tenant_has_work(db: Database, tenant: NewTenant) -> None:
    response = invoke_function("HeartbeatFunction", load_event("heartbeat_schedule"))
    assert response == {"ok": True, "ticks": [], "fanned_out": 0}


def test_signal_planner_plans_a_queued_signal_once(db: Database, tenant: NewTenant) -> None:
    created = db.one(
        tenant.tenant_id,
        "signal_insert",
        project_id=None,
        source="test",
        kind="lead",
        title="New lead: bathroom remodel",
        body="",
        payload={},
    )
    assert created is not None
    body = {"signal_id": str(created["signal_id"]), "tenant_id": str(tenant.tenant_id)}
    event = load_event("signal_planner_sqs")
    event["Records"] = [dict(event["Records"][0], body=json.dumps(body))] * 2  # a duplicate
    response = invoke_function("SignalPlannerFunction", event)
    assert response == {"batchItemFailures": []}
    signal = db.one(tenant.tenant_id, "signal_get", signal_id=created["signal_id"])
    assert signal is not None
    assert signal["status"] == "completed"
    assert signal["attempts"] == 1
    assert signal["strategic_analysis"]["ai_planner"]["fallback_mode"] is True


def test_signal_intake_commits_then_plans_through_the_local_queue(
    db: Database, tenant: NewTenant
) -> None:
    created = create_signal(db, tenant.tenant_id, NewSignal(title="Leak reported at 12 Elm St"))
    signal = db.one(tenant.tenant_id, "signal_get", signal_id=created["signal_id"])
    assert signal is not None and signal["status"] == "completed"
    with db.connection() as conn:
        unpublished = conn.execute("SELECT count(*) AS n FROM outbox WHERE published_at IS NULL")
        assert unpublished.fetchone()["n"] == 0


@pytest.mark.parametrize(
    ("logical_id", "event", "check"),
    [
        (
            "ChatCompletionFunction",
            "malformed/chat_completion_no_request_context",
            lambda r: (
                r["statusCode"] == 400 and json.loads(r["body"])["error"]["code"] == "invalid_event"
            ),
        ),
        (
            "AgentExecuteFunction",
            "malformed/agent_execute_missing_skill",
            lambda r: r["status"] == "invalid" and r["error"]["details"][0]["field"] == "skill",
        ),
        (
            "HeartbeatFunction",
            "malformed/heartbeat_not_an_object",
            lambda r: r["ok"] is False and r["error"]["code"] == "invalid_event",
        ),
        (
            "SignalPlannerFunction",
            "malformed/signal_planner_body_not_json",
            lambda r: len(r["batchItemFailures"]) == 1,
        ),
    ],
)
def test_a_malformed_event_gets_a_clear_error(
    db: Database, logical_id: str, event: str, check: object
) -> None:
    response = invoke_function(logical_id, load_event(event))
    assert callable(check) and check(response), response


def test_only_the_bad_record_of_a_batch_is_retried(db: Database, tenant: NewTenant) -> None:
    good = db.one(
        tenant.tenant_id, "signal_insert", project_id=None, source="t", kind="k",
        title="fine", body="", payload={},
    )  # fmt: skip
    assert good is not None
    event = load_event("signal_planner_sqs")
    ok_body = json.dumps({"signal_id": str(good["signal_id"]), "tenant_id": str(tenant.tenant_id)})
    event["Records"][0]["body"] = ok_body
    event["Records"][1]["body"] = "{not json"
    response = invoke_function("SignalPlannerFunction", event)
    assert response["batchItemFailures"] == [{"itemIdentifier": event["Records"][1]["messageId"]}]


def test_the_cli_invoke_prints_json_and_exits_by_outcome(db: Database) -> None:
    cli = [sys.executable, "-m", "flowpilot.cli.main", "invoke"]
    ok = subprocess.run(
        [*cli, "HeartbeatFunction", "--event", "events/heartbeat_schedule.json"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout) == {"ok": True, "ticks": [], "fanned_out": 0}
    broken = subprocess.run(
        [*cli, "SignalPlannerFunction", "--event", "events/heartbeat_schedule.json"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert broken.returncode == 1
    assert "invalid_event" in broken.stderr or "SQS event" in broken.stderr


def test_a_signal_delivered_twice_at_once_is_planned_once(db: Database, tenant: NewTenant) -> None:
    import threading

    from flowpilot.signals.lambda_entry import handle_batch

    created = db.one(
        tenant.tenant_id, "signal_insert", project_id=None, source="t", kind="lead",
        title="Double delivery", body="", payload={},
    )  # fmt: skip
    assert created is not None
    body = json.dumps({"signal_id": str(created["signal_id"]), "tenant_id": str(tenant.tenant_id)})
    event = load_event("signal_planner_sqs")
    event["Records"] = [dict(event["Records"][0], body=body)]
    barrier = threading.Barrier(4)
    answers: list[dict[str, object]] = []

    def deliver() -> None:
        barrier.wait()
        answers.append(handle_batch(event, None))

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert answers == [{"batchItemFailures": []}] * 4
    signal = db.one(tenant.tenant_id, "signal_get", signal_id=created["signal_id"])
    assert signal is not None and signal["status"] == "completed" and signal["attempts"] == 1
