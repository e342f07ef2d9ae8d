"""SQS-shaped events for the local worker, so the same planner handler runs locally."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterable
from typing import Any


def sqs_event(
    bodies: Iterable[tuple[str, dict[str, Any]]], *, receive_count: int = 1
) -> dict[str, Any]:
    """An SQS batch event of (message id, body) pairs."""
    now = str(int(time.time() * 1000))
    records = []
    for message_id, body in bodies:
        text = json.dumps(body, default=str)
        records.append(
            {
                "messageId": message_id,
                "receiptHandle": "local-" + uuid.uuid4().hex,
                "body": text,
                "attributes": {
                    "ApproximateReceiveCount": str(receive_count),
                    "SentTimestamp": now,
                    "SenderId": "flowpilot-local",
                    "ApproximateFirstReceiveTimestamp": now,
                },
                "messageAttributes": {},
                "md5OfBody": hashlib.md5(text.encode(), usedforsecurity=False).hexdigest(),
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:local:000000000000:flowpilot-signals",
                "awsRegion": "local",
            }
        )
    return {"Records": records}
