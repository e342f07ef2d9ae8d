"""A moto server on loopback for tests of code that calls AWS through boto3.

``moto_server`` (session) starts one in-process moto server on a free port of 127.0.0.1;
``aws`` (per test) points boto3 at it through the environment and resets moto's state first,
so every test starts with empty AWS. Register both with
``from flowpilot.testing.aws import aws, moto_server`` in a conftest or test module.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

REGION = "us-east-1"
# Variables that would point boto3 at a real account or profile instead of the server.
_REAL_ACCOUNT_VARIABLES = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")


@dataclass(frozen=True)
class MotoServer:
    url: str

    @property
    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": REGION,
        }

    def post(self, path: str, body: Any = None) -> Any:
        """POST JSON to one of moto's own endpoints (``/moto-api/...``); returns its JSON."""
        data = json.dumps(body if body is not None else {}).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
        return json.loads(raw) if raw.strip() else None

    def reset(self) -> None:
        """Forget every resource created so far."""
        self.post("/moto-api/reset")

    def configure(self, config: dict[str, Any]) -> Any:
        """Change moto's behaviour, e.g. ``{"lambda": {"use_docker": False}}``."""
        return self.post("/moto-api/config", config)

    @contextmanager
    def simple_lambda(self, name: str) -> Iterator[str]:
        """A Lambda function answered by moto's "simple" backend (no Docker): it echoes the
        payload, or returns results queued with :meth:`queue_lambda_results`. Yields its ARN."""
        import io
        import json
        import zipfile

        import boto3

        self.configure({"lambda": {"use_docker": False}})
        try:
            trust = {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
            role = boto3.client("iam").create_role(
                RoleName=f"{name}-role", AssumeRolePolicyDocument=json.dumps(trust)
            )["Role"]["Arn"]
            code = io.BytesIO()
            with zipfile.ZipFile(code, "w") as archive:
                archive.writestr("app.py", "def handler(event, context):\n    return event\n")
            function = boto3.client("lambda").create_function(
                FunctionName=name,
                Runtime="python3.12",
                Role=role,
                Handler="app.handler",
                Code={"ZipFile": code.getvalue()},
            )
            yield str(function["FunctionArn"])
        finally:
            self.configure({"lambda": {"use_docker": True}})

    def queue_lambda_results(self, *results: Any, region: str = "us-east-1") -> None:
        import json

        self.post(
            "/moto-api/static/lambda-simple/response",
            {"results": [json.dumps(r) for r in results], "region": region},
        )


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield MotoServer(f"http://{host}:{port}")
    finally:
        server.stop()


@pytest.fixture
def aws(moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoServer]:
    """boto3 pointed at the moto server, with moto's state reset."""
    for name in _REAL_ACCOUNT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in moto_server.env.items():
        monkeypatch.setenv(name, value)
    moto_server.reset()
    yield moto_server
