"""Signal intake through a real SQS queue (moto over HTTP): outbox, relay, planner batch."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from flowpilot.config import reset_settings
from flowpilot.db import Database
from flowpilot.signals.intake import create_signal
from flowpilot.signals.lambda_entry import handle_batch
from flowpilot.signals.models import NewSignal
from flowpilot.signals.queue import relay_outbox
from flowpilot.tenancy import NewTenant
from flowpilot.testing.aws import REGION, MotoServer


def _queue(name: str = "flowpilot-signals") -> str:
    import boto3

    return str(boto3.client("sqs").create_queue(QueueName=name)["QueueUrl"])


def _point_at(monkeypatch: pytest.MonkeyPatch, queue_url: str) -> None:
    monkeypatch.setenv("SIGNAL_QUEUE_URL", queue_url)
    reset_settings()


def _receive(queue_url: str) -> list[dict[str, Any]]:
    """Every message waiting on the queue (moto hands them all over at once)."""
    import boto3

    response = boto3.client("sqs").receive_message(
        QueueUrl=queue_url,
        MaxNumberOfMessages=10,
        WaitTimeSeconds=0,
        AttributeNames=["All"],
        MessageAttributeNames=["All"],
    )
    return list(response.get("Messages", []))


def _outbox(db: Database) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return list(
            conn.execute(
                "SELECT outbox_id, tenant_id, topic, payload, published_at, attempts "
                "FROM outbox ORDER BY outbox_id"
            ).fetchall()
        )


def _sqs_event(queue_url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The event Lambda's SQS event source mapping builds from received messages."""
    import boto3

    arn = boto3.client("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": message.get("Attributes", {}),
                "messageAttributes": message.get("MessageAttributes", {}),
                "md5OfBody": message["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": arn["Attributes"]["QueueArn"],
                "awsRegion": REGION,
            }
            for message in messages
        ]
    }


def test_intake_commits_the_signal_and_sends_one_message(
    aws: MotoServer, db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue_url = _queue()
    _point_at(monkeypatch, queue_url)

    created = create_signal(db, tenant.tenant_id, NewSignal(title="Leak reported at 12 Elm St"))

    signal = db.one(tenant.tenant_id, "signal_get", signal_id=created["signal_id"])
    assert signal is not None and signal["status"] == "pending"  # queued, not planned here
    messages = _receive(queue_url)
    assert len(messages) == 1
    assert json.loads(messages[0]["Body"]) == {
        "signal_id": str(created["signal_id"]),
        "tenant_id": str(tenant.tenant_id),
    }
    [row] = _outbox(db)
    assert row["topic"] == "signal.plan" and row["tenant_id"] == tenant.tenant_id
    assert row["published_at"] is not None and row["attempts"] == 1


def test_a_failed_send_loses_nothing_and_the_relay_sends_it_once(
    aws: MotoServer, db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue_url = _queue()
    # The same account and region, but a queue moto has never heard of: the send fails
    # after the signal is committed, as a crash between commit and send would leave it.
    _point_at(monkeypatch, queue_url.rsplit("/", 1)[0] + "/no-such-queue")

    created = create_signal(db, tenant.tenant_id, NewSignal(title="Boiler quote requested"))

    signal = db.one(tenant.tenant_id, "signal_get", signal_id=created["signal_id"])
    assert signal is not None and signal["status"] == "pending"
    [row] = _outbox(db)
    assert row["published_at"] is None and row["attempts"] == 0
    assert _receive(queue_url) == []

    _point_at(monkeypatch, queue_url)
    assert relay_outbox(db, min_age_s=0) == 1

    messages = _receive(queue_url)
    assert [json.loads(m["Body"]) for m in messages] == [
        {"signal_id": str(created["signal_id"]), "tenant_id": str(tenant.tenant_id)}
    ]
    [row] = _outbox(db)
    assert row["published_at"] is not None and row["attempts"] == 1

    assert relay_outbox(db, min_age_s=0) == 0
    assert _receive(queue_url) == []


def test_the_planner_plans_a_received_message_once(
    aws: MotoServer, db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue_url = _queue()
    _point_at(monkeypatch, queue_url)
    created = create_signal(db, tenant.tenant_id, NewSignal(title="New lead: bathroom remodel"))
    messages = _receive(queue_url)
    assert len(messages) == 1
    event = _sqs_event(queue_url, messages)
    assert event["Records"][0]["attributes"]["ApproximateReceiveCount"] == "1"

    assert handle_batch(event, None) == {"batchItemFailures": []}

    signal = db.one(tenant.tenant_id, "signal_get", signal_id=created["signal_id"])
    assert signal is not None and signal["status"] == "completed"
    assert signal["attempts"] == 1
    plan = signal["strategic_analysis"]["ai_planner"]
    assert plan["fallback_mode"] is True
    assert "New lead: bathroom remodel" in plan["summary"]

    # SQS delivers at least once: the same message again is acknowledged, not planned twice.
    assert handle_batch(event, None) == {"batchItemFailures": []}
    again = db.one(tenant.tenant_id, "signal_get", signal_id=created["signal_id"])
    assert again is not None and again["status"] == "completed" and again["attempts"] == 1
    assert again["completed_at"] == signal["completed_at"]


def test_a_message_for_an_unknown_signal_is_acknowledged(
    aws: MotoServer, db: Database, tenant: NewTenant
) -> None:
    import boto3

    queue_url = _queue()
    body = {"signal_id": str(uuid.uuid4()), "tenant_id": str(tenant.tenant_id)}
    boto3.client("sqs").send_message(QueueUrl=queue_url, MessageBody=json.dumps(body))

    assert handle_batch(_sqs_event(queue_url, _receive(queue_url)), None) == {
        "batchItemFailures": []
    }
