"""SignalPlannerFunction's work: an SQS batch, each record planned on its own.

A record that raises is reported in ``batchItemFailures`` so only it is retried (and after
maxReceiveCount it reaches the dead-letter queue); the rest of the batch is acknowledged.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from flowpilot.errors import InvalidEvent
from flowpilot.observability import logger


def _plan_record(record: SQSRecord) -> dict[str, Any]:
    from pydantic import ValidationError

    from flowpilot.db import get_db
    from flowpilot.signals.models import SignalMessage
    from flowpilot.signals.planner import plan_signal

    try:
        message = SignalMessage.model_validate(json.loads(record.body))
    except (json.JSONDecodeError, ValidationError, TypeError) as exc:
        logger.warning("malformed signal message", message_id=record.message_id, error=str(exc))
        raise InvalidEvent(f"message {record.message_id} is not a signal message: {exc}") from None
    return plan_signal(get_db(), message)


def handle_batch(event: Any, context: Any) -> dict[str, Any]:
    if not isinstance(event, dict) or not isinstance(event.get("Records"), list):
        raise InvalidEvent("expected an SQS event with a Records list")
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    response = process_partial_response(
        event=event, record_handler=_plan_record, processor=processor, context=context
    )
    return dict(response)
