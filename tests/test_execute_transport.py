"""The Lambda execute transport against real HTTP: moto's Lambda, and a failing endpoint."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from flowpilot.config import reset_settings
from flowpilot.errors import FlowPilotError
from flowpilot.execute import client as execute_client
from flowpilot.execute.client import InProcessClient, LambdaClient, default_client
from flowpilot.execute.models import Actor, ExecuteRequest, ExecuteResult
from flowpilot.testing.aws import REGION, MotoServer

FUNCTION = "flowpilot-agent-execute"


def _request(**changes: Any) -> ExecuteRequest:
    base: dict[str, Any] = {
        "tenant_id": uuid.uuid4(),
        "actor": Actor(type="flowpilot", id="heartbeat"),
        "skill": "memory_search",
        "arguments": {"query": "boiler"},
        "idempotency_key": "tick-1:memory_search",
    }
    return ExecuteRequest(**{**base, **changes})


@pytest.fixture
def fresh_lambda_client() -> Iterator[None]:
    """The boto3 client is cached per process; each test builds it for its own endpoint."""
    execute_client._lambda_client.cache_clear()
    yield
    execute_client._lambda_client.cache_clear()


@pytest.fixture
def moto_lambda(aws: MotoServer, fresh_lambda_client: None) -> Iterator[MotoServer]:
    """The agent-execute function in moto, answered by the "simple" backend (no Docker)."""
    with aws.simple_lambda(FUNCTION):
        yield aws


def test_lambda_client_returns_the_functions_execute_result(moto_lambda: MotoServer) -> None:
    answer = {
        "status": "executed",
        "result": {"ok": True},
        "approval_id": None,
        "trust_level": "auto",
        "error": None,
    }
    moto_lambda.queue_lambda_results(answer, region=REGION)

    result = LambdaClient(FUNCTION).execute(_request())

    assert result == ExecuteResult.model_validate(answer)
    assert result.status == "executed" and result.result == {"ok": True}


def test_lambda_client_sends_the_execute_request_as_the_payload(moto_lambda: MotoServer) -> None:
    # With no queued result, moto's simple backend answers an invoke with the payload it was
    # sent. An ExecuteRequest is not an ExecuteResult (no status), so the echo fails
    # validation, and the validation error carries the request JSON that went over the wire.
    from pydantic import ValidationError

    request = _request(run_id=uuid.uuid4())
    with pytest.raises(ValidationError) as raised:
        LambdaClient(FUNCTION).execute(request)
    [error] = [e for e in raised.value.errors() if e["loc"] == ("status",)]
    assert error["type"] == "missing"
    assert error["input"] == request.model_dump(mode="json")


@pytest.mark.parametrize(
    ("env", "lambda_expected"),
    [
        ({}, False),
        ({"FLOWPILOT_EXECUTE_TRANSPORT": "lambda"}, False),
        ({"AGENT_EXECUTE_FUNCTION": FUNCTION}, False),
        ({"FLOWPILOT_EXECUTE_TRANSPORT": "inprocess", "AGENT_EXECUTE_FUNCTION": FUNCTION}, False),
        ({"FLOWPILOT_EXECUTE_TRANSPORT": "lambda", "AGENT_EXECUTE_FUNCTION": FUNCTION}, True),
    ],
    ids=["default", "lambda-without-function", "function-only", "inprocess", "lambda"],
)
def test_default_client_is_lambda_only_with_transport_and_function(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], lambda_expected: bool
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    reset_settings()

    chosen = default_client()

    if lambda_expected:
        assert isinstance(chosen, LambdaClient) and chosen.function_name == FUNCTION
    else:
        assert isinstance(chosen, InProcessClient)


# --- a Lambda endpoint that answers with a function error ---------------------------------


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True


@pytest.fixture
def failing_lambda(
    monkeypatch: pytest.MonkeyPatch, fresh_lambda_client: None
) -> Iterator[list[dict[str, Any]]]:
    """A loopback server speaking Lambda's Invoke REST path; every invoke is Unhandled."""
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            requests.append({"path": self.path, "body": body})
            error = {
                "errorMessage": "Task timed out after 30.00 seconds",
                "errorType": "Sandbox.Timedout",
            }
            reply = json.dumps(error).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-Amz-Function-Error", "Unhandled")
            self.send_header("X-Amz-Executed-Version", "$LATEST")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = _QuietServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    for name, value in {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{httpd.server_address[1]}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    try:
        yield requests
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_function_error_is_execute_unavailable(failing_lambda: list[dict[str, Any]]) -> None:
    request = _request()

    with pytest.raises(FlowPilotError) as raised:
        LambdaClient(FUNCTION).execute(request)

    assert raised.value.code == "execute_unavailable"
    assert "Task timed out after 30.00 seconds" in raised.value.message
    [sent] = failing_lambda
    assert sent["path"] == f"/2015-03-31/functions/{FUNCTION}/invocations"
    assert json.loads(sent["body"]) == request.model_dump(mode="json")
