"""Publishing outbox rows to the signal queue: SQS in AWS, the local worker otherwise.

Publishing is best effort: a row that fails to send stays unpublished and the relay (run by
every heartbeat and by ``flowpilot up``'s worker) sends it again, so nothing is lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from flowpilot.config import get_settings
from flowpilot.db import Database
from flowpilot.observability import logger

Row = dict[str, Any]


def sqs_publisher(queue_url: str) -> Callable[[Sequence[Row]], list[int]]:
    import boto3

    client = boto3.client("sqs")

    def publish(rows: Sequence[Row]) -> list[int]:
        sent: list[int] = []
        for start in range(0, len(rows), 10):
            chunk = rows[start : start + 10]
            response = client.send_message_batch(
                QueueUrl=queue_url,
                Entries=[
                    {"Id": str(row["outbox_id"]), "MessageBody": json.dumps(row["payload"])}
                    for row in chunk
                ],
            )
            sent.extend(int(ok["Id"]) for ok in response.get("Successful", []))
        return sent

    return publish


def local_publisher(rows: Sequence[Row]) -> list[int]:
    """Locally the planner runs in-process on an SQS-shaped event of the rows."""
    from flowpilot.signals.lambda_entry import handle_batch
    from flowpilot.signals.local_events import sqs_event

    planned = [row for row in rows if row["topic"] == "signal.plan"]
    failed: set[str] = set()
    if planned:
        event = sqs_event((str(row["outbox_id"]), row["payload"]) for row in planned)
        response = handle_batch(event, None)
        failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
    # A failed record stays unpublished, so the relay retries it, as SQS would redeliver it.
    return [int(row["outbox_id"]) for row in rows if str(row["outbox_id"]) not in failed]


def default_publisher() -> Callable[[Sequence[Row]], list[int]]:
    url = get_settings().signal_queue_url
    return sqs_publisher(url) if url else local_publisher


def publish_rows(
    db: Database,
    rows: Sequence[Row],
    publisher: Callable[[Sequence[Row]], list[int]] | None = None,
) -> int:
    """Send rows and mark the ones that went; errors are logged, never raised."""
    if not rows:
        return 0
    try:
        sent = (publisher or default_publisher())(rows)
    except Exception:
        logger.exception("outbox publish failed; the relay will retry", rows=len(rows))
        return 0
    if sent:
        db.run(None, "outbox_mark_published", ids=sent)
    return len(sent)


def relay_outbox(
    db: Database,
    *,
    min_age_s: float = 30.0,
    limit: int = 100,
    publisher: Callable[[Sequence[Row]], list[int]] | None = None,
) -> int:
    """Republish outbox rows left unpublished (for example by a crash after commit).

    No transaction stays open while the queue is called: the rows are read, published, then
    marked. Two relays at once may both send a row; the planner's claim makes that harmless.
    """
    rows = db.all(None, "outbox_unpublished", min_age_s=min_age_s, limit=limit)
    return publish_rows(db, rows, publisher)
