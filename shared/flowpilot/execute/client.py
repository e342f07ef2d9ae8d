"""The execute transports: how engine, heartbeat and API reach agent-execute.

In-process locally and in tests; ``lambda:Invoke`` of AgentExecuteFunction in AWS, so only
that function holds the permissions side effects need. Chosen by settings, never by code.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Protocol

from flowpilot.config import get_settings
from flowpilot.db import Database
from flowpilot.errors import FlowPilotError
from flowpilot.execute.models import ExecuteRequest, ExecuteResult


class ExecuteClient(Protocol):
    def execute(self, request: ExecuteRequest) -> ExecuteResult: ...


class InProcessClient:
    def __init__(self, db: Database | None = None) -> None:
        self.db = db

    def execute(self, request: ExecuteRequest) -> ExecuteResult:
        from flowpilot.execute.service import execute

        return execute(request, db=self.db)


class LambdaClient:
    def __init__(self, function_name: str) -> None:
        self.function_name = function_name

    @property
    def _lambda(self) -> Any:
        return _lambda_client()

    def execute(self, request: ExecuteRequest) -> ExecuteResult:
        response = self._lambda.invoke(
            FunctionName=self.function_name,
            InvocationType="RequestResponse",
            Payload=request.model_dump_json().encode(),
        )
        payload = json.loads(response["Payload"].read() or b"null")
        if response.get("FunctionError"):
            message = payload.get("errorMessage") if isinstance(payload, dict) else None
            raise FlowPilotError(
                f"agent-execute failed: {message or 'unknown error'}", code="execute_unavailable"
            )
        return ExecuteResult.model_validate(payload)


@cache
def _lambda_client() -> Any:
    import boto3

    return boto3.client("lambda")


def default_client(db: Database | None = None) -> ExecuteClient:
    """The transport the settings choose; in-process calls use ``db`` (default: get_db())."""
    settings = get_settings()
    if settings.execute_via_lambda and settings.agent_execute_function:
        return LambdaClient(settings.agent_execute_function)
    return InProcessClient(db)
