"""Structured logs, metrics and (opt-in) tracing, shared by every function.

Logger and Metrics are cheap to create. The X-Ray tracer pulls in botocore and the X-Ray
SDK (~300 ms of cold start), so it is created only when ``FLOWPILOT_TRACING`` is on.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics

SERVICE = "flowpilot"

# Logs go to stderr: Lambda sends both streams to CloudWatch, and locally stdout stays free
# for the JSON that commands such as `flowpilot invoke` print.
logger = Logger(service=SERVICE, stream=sys.stderr)
metrics = Metrics(namespace="FlowPilot", service=SERVICE)

# A function that recorded no metric this invocation is normal, not worth a warning.
warnings.filterwarnings("ignore", message="No application metrics to publish")

Handler = TypeVar("Handler", bound=Callable[..., Any])


def lambda_entry(handler: Handler) -> Handler:
    """Decorate a Lambda handler with context logging, metrics flushing and optional tracing."""
    logged = logger.inject_lambda_context(clear_state=True)(handler)
    measured = metrics.log_metrics(logged)

    @functools.wraps(handler)
    def entry(event: Any, context: Any) -> Any:
        from flowpilot.config import get_settings

        if get_settings().tracing:
            return _traced(measured)(event, context)
        return measured(event, context)

    return entry  # type: ignore[return-value]


@functools.cache
def _tracer() -> Any:
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE)


def _traced(handler: Callable[..., Any]) -> Callable[..., Any]:
    return _tracer().capture_lambda_handler(handler)  # type: ignore[no-any-return,unused-ignore]
