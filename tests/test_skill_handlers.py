"""Skill handlers against real things: an HTTP receiver, PostgreSQL, and a Lambda endpoint."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from flowpilot.config import Settings
from flowpilot.db import Database
from flowpilot.execute.models import Actor
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers import handler_problem, lambda_invoke, sql_template, webhook
from flowpilot.skills.handlers.http_client import bounded_request
from flowpilot.skills.internal.http import http_request
from flowpilot.tenancy import NewTenant
from flowpilot.testing.aws import MotoServer

SECRET = "s3cret-for-tests"
ACTOR = Actor(type="user", id="user-1")


def make_ctx(
    db: Database | None,
    tenant_id: uuid.UUID,
    handler: str,
    *,
    name: str = "test_skill",
    side_effects: str = "read",
    config: dict[str, Any] | None = None,
    settings: Settings | None = None,
    run_id: uuid.UUID | None = None,
) -> SkillContext:
    return SkillContext(
        db=db,  # type: ignore[arg-type]
        settings=settings or Settings(),
        tenant_id=tenant_id,
        actor=ACTOR,
        skill={
            "name": name,
            "handler": handler,
            "side_effects": side_effects,
            "config": config or {},
        },
        run_id=run_id,
    )


# --- a real HTTP server on loopback -------------------------------------------------------


@dataclass
class Served:
    """What the test server answers, and every request it was sent."""

    answer: Callable[[BaseHTTPRequestHandler, bytes], None]
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout, size cap) is expected here


def _reply(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    *,
    content_type: str = "application/json",
    length: bool = True,
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    if length:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def server() -> Iterator[Served]:
    served = Served(answer=lambda h, body: _reply(h, 200, b'{"ok": true}'))

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size)
            served.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body,
                }
            )
            served.answer(self, body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = _QuietServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield served
    httpd.shutdown()
    httpd.server_close()


# --- webhook ------------------------------------------------------------------------------


def _verifying_receiver(h: BaseHTTPRequestHandler, body: bytes) -> None:
    ok = webhook.verify_signature(
        SECRET,
        h.headers["X-FlowPilot-Timestamp"],
        body,
        h.headers["X-FlowPilot-Signature"],
    )
    if not ok:
        _reply(h, 401, b'{"error": "bad signature"}')
        return
    sent = json.loads(body)
    _reply(h, 200, json.dumps({"received": sent["arguments"], "skill": sent["skill"]}).encode())


def _webhook_ctx(url: str, *, secret: str | None = SECRET, **config: Any) -> SkillContext:
    settings = Settings(webhook_secret=secret) if secret else Settings()
    return make_ctx(
        None,
        uuid.uuid4(),
        f"webhook:{url}",
        name="notify_crm",
        config=config,
        settings=settings,
        run_id=uuid.uuid4(),
    )


def test_webhook_is_signed_and_the_receiver_verifies_it(server: Served) -> None:
    server.answer = _verifying_receiver
    ctx = _webhook_ctx(server.url + "/hook")

    result = webhook.run(ctx, {"order": 42})

    assert result == {"received": {"order": 42}, "skill": "notify_crm"}
    sent = server.requests[0]
    assert sent["method"] == "POST" and sent["path"] == "/hook"
    assert sent["headers"]["x-flowpilot-skill"] == "notify_crm"
    assert sent["headers"]["x-flowpilot-signature"].startswith("sha256=")
    payload = json.loads(sent["body"])
    assert payload["tenant_id"] == str(ctx.tenant_id)
    assert payload["run_id"] == str(ctx.run_id)
    assert payload["arguments"] == {"order": 42}


def test_a_tampered_or_stale_webhook_fails_verification(server: Served) -> None:
    server.answer = _verifying_receiver
    webhook.run(_webhook_ctx(server.url), {"amount": 10})
    sent = server.requests[0]
    timestamp = sent["headers"]["x-flowpilot-timestamp"]
    signature = sent["headers"]["x-flowpilot-signature"]
    body: bytes = sent["body"]

    assert webhook.verify_signature(SECRET, timestamp, body, signature)
    tampered = body.replace(b'"amount":10', b'"amount":99')
    assert tampered != body
    assert not webhook.verify_signature(SECRET, timestamp, tampered, signature)
    assert not webhook.verify_signature("another-secret", timestamp, body, signature)
    assert not webhook.verify_signature(
        SECRET, timestamp, body, signature, now=int(timestamp) + 301
    )
    assert not webhook.verify_signature(SECRET, "not-a-number", body, signature)


def test_webhook_without_json_answer_returns_the_status(server: Served) -> None:
    server.answer = lambda h, body: _reply(h, 204, b"", content_type="text/plain")
    assert webhook.run(_webhook_ctx(server.url), {}) == {"status": 204}


def test_slow_webhook_times_out_fast(server: Served) -> None:
    def slow(h: BaseHTTPRequestHandler, body: bytes) -> None:
        time.sleep(2)
        _reply(h, 200, b"{}")

    server.answer = slow
    started = time.monotonic()
    with pytest.raises(SkillFailed) as failed:
        webhook.run(_webhook_ctx(server.url, timeout_s=0.5), {})
    assert failed.value.code == "timeout"
    assert "0.5 seconds" in failed.value.message
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_oversized_webhook_response_is_cut_off(server: Served, declared: bool) -> None:
    big = b'{"pad": "' + b"x" * 2_000_000 + b'"}'
    server.answer = lambda h, body: _reply(h, 200, big, length=declared)
    with pytest.raises(SkillFailed) as failed:
        webhook.run(_webhook_ctx(server.url, max_bytes=100_000), {})
    assert failed.value.code == "response_too_large"


def test_webhook_error_status_fails(server: Served) -> None:
    server.answer = lambda h, body: _reply(h, 500, b'{"error": "boom"}')
    with pytest.raises(SkillFailed) as failed:
        webhook.run(_webhook_ctx(server.url), {})
    assert failed.value.code == "webhook_error"
    assert failed.value.details == {"status": 500}
    assert "500" in failed.value.message


def test_webhook_redirects_are_not_followed(server: Served) -> None:
    server.answer = lambda h, body: _reply(h, 302, b"", headers={"Location": "/elsewhere"})
    with pytest.raises(SkillFailed) as failed:
        webhook.run(_webhook_ctx(server.url), {})
    assert failed.value.code == "webhook_error"
    assert [r["path"] for r in server.requests] == ["/"]


def test_webhook_without_a_secret_sends_nothing(server: Served) -> None:
    with pytest.raises(SkillFailed) as failed:
        webhook.run(_webhook_ctx(server.url, secret=None), {})
    assert failed.value.code == "webhook_unsigned"
    assert server.requests == []


def test_webhook_to_plain_http_elsewhere_is_refused_before_connecting() -> None:
    # The autouse network guard would raise ExternalNetworkBlocked had a connection been tried.
    with pytest.raises(SkillFailed) as failed:
        webhook.run(_webhook_ctx("http://example.com/hook"), {})
    assert failed.value.code == "insecure_url"


def test_webhook_unreachable() -> None:
    with pytest.raises(SkillFailed) as failed:
        webhook.run(_webhook_ctx("http://127.0.0.1:9/hook", timeout_s=2), {})
    assert failed.value.code == "unreachable"


def test_webhook_secret_from_secrets_manager(aws: MotoServer, server: Served) -> None:
    import boto3
    from aws_lambda_powertools.utilities import parameters

    arn = boto3.client("secretsmanager").create_secret(Name="webhook", SecretString=SECRET)["ARN"]
    parameters.clear_caches()
    server.answer = _verifying_receiver
    ctx = _webhook_ctx(server.url)
    ctx = make_ctx(
        None,
        ctx.tenant_id,
        ctx.skill["handler"],
        name="notify_crm",
        settings=Settings(webhook_secret_arn=arn),
    )
    try:
        assert webhook.run(ctx, {"a": 1}) == {"received": {"a": 1}, "skill": "notify_crm"}
    finally:
        parameters.clear_caches()


# --- http_request (internal) --------------------------------------------------------------


def test_http_request_returns_json_or_text(server: Served) -> None:
    ctx = make_ctx(None, uuid.uuid4(), "internal:http_request")
    server.answer = lambda h, body: _reply(h, 201, json.dumps({"echo": json.loads(body)}).encode())
    args = {"method": "post", "url": server.url, "json_body": '{"a": 1}',
            "headers": [{"name": "X-Trace", "value": "t1"}]}  # fmt: skip
    result = http_request(ctx, args)
    assert result == {"status": 201, "json": {"echo": {"a": 1}}}
    with pytest.raises(SkillFailed) as failed:
        http_request(ctx, dict(args, json_body="{broken"))
    assert failed.value.code == "invalid_arguments"

    server.answer = lambda h, body: _reply(h, 200, b"y" * 5_000, content_type="text/plain")
    result = http_request(ctx, {"method": "GET", "url": server.url})
    assert result["status"] == 200 and result["truncated"] is True
    assert result["text"] == "y" * 4_000

    with pytest.raises(SkillFailed) as failed:
        http_request(ctx, {"method": "TRACE", "url": server.url})
    assert failed.value.code == "invalid_arguments"
    with pytest.raises(SkillFailed) as failed:
        http_request(ctx, {"method": "GET", "url": "ftp://127.0.0.1/file"})
    assert failed.value.code == "insecure_url"


def test_bounded_request_json_needs_a_json_content_type(server: Served) -> None:
    server.answer = lambda h, body: _reply(h, 200, b'{"a": 1}', content_type="text/plain")
    result = bounded_request("GET", server.url)
    assert result.json is None and result.text == '{"a": 1}'


# --- sql: ---------------------------------------------------------------------------------

MEMORY_QUERY = (
    "SELECT memory_id, category, content, importance, created_at, 1.5::numeric AS weight "
    "FROM agent_memory WHERE tenant_id = %(tenant_id)s AND category = %(category)s "
    "ORDER BY content"
)


def _remember(db: Database, tenant_id: uuid.UUID, *contents: str) -> None:
    with db.transaction(tenant_id) as tx:
        for content in contents:
            tx.sql(
                "INSERT INTO agent_memory (tenant_id, category, content) "
                "VALUES (%(t)s, 'fact', %(c)s)",
                {"t": tenant_id, "c": content},
            )


def _sql_ctx(
    db: Database,
    tenant_id: uuid.UUID,
    query: str,
    *,
    side_effects: str = "read",
    max_rows: int = 100,
    timeout_ms: int = 2_000,
) -> SkillContext:
    sql = {"query": query, "max_rows": max_rows, "timeout_ms": timeout_ms}
    return make_ctx(db, tenant_id, "sql:facts", side_effects=side_effects, config={"sql": sql})


def test_sql_sees_only_its_own_tenant(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    _remember(db, tenant.tenant_id, "ours 1", "ours 2")
    _remember(db, other_tenant.tenant_id, "theirs")

    result = sql_template.run(_sql_ctx(db, tenant.tenant_id, MEMORY_QUERY), {"category": "fact"})

    assert [row["content"] for row in result["rows"]] == ["ours 1", "ours 2"]
    assert result["truncated"] is False and result["row_count"] == 2
    row = result["rows"][0]
    uuid.UUID(row["memory_id"])
    assert row["weight"] == 1.5 and isinstance(row["created_at"], str)
    json.dumps(result)  # JSON-safe throughout

    # Even a template that forgets to filter sees one tenant: RLS holds the line.
    careless = "SELECT content FROM agent_memory WHERE %(tenant_id)s::uuid IS NOT NULL"
    result = sql_template.run(_sql_ctx(db, other_tenant.tenant_id, careless), {})
    assert [row["content"] for row in result["rows"]] == ["theirs"]


def test_sql_caller_cannot_supply_tenant_id(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    _remember(db, other_tenant.tenant_id, "theirs")
    ctx = _sql_ctx(db, tenant.tenant_id, MEMORY_QUERY)
    with pytest.raises(SkillFailed) as failed:
        sql_template.run(ctx, {"category": "fact", "tenant_id": str(other_tenant.tenant_id)})
    assert failed.value.code == "invalid_arguments"


def test_sql_missing_argument(db: Database, tenant: NewTenant) -> None:
    with pytest.raises(SkillFailed) as failed:
        sql_template.run(_sql_ctx(db, tenant.tenant_id, MEMORY_QUERY), {})
    assert failed.value.code == "invalid_arguments"
    assert failed.value.details == {"missing": ["category"]}


@pytest.mark.parametrize(
    "query",
    [
        "INSERT INTO agent_memory (tenant_id, category, content) "
        "VALUES (%(tenant_id)s, 'fact', 'sneaky') RETURNING memory_id",
        "WITH gone AS (DELETE FROM agent_memory WHERE tenant_id = %(tenant_id)s RETURNING 1) "
        "SELECT count(*) AS n FROM gone",
        "SELECT * FROM flowpilot_heartbeat_begin(%(tenant_id)s, 'sql-skill', 60)",
    ],
    ids=["insert", "delete-in-cte", "function-that-writes"],
)
def test_sql_read_skill_cannot_write(db: Database, tenant: NewTenant, query: str) -> None:
    with pytest.raises(SkillFailed) as failed:
        sql_template.run(_sql_ctx(db, tenant.tenant_id, query), {})
    assert failed.value.code == "read_only"
    with db.transaction(tenant.tenant_id) as tx:
        assert tx.sql("SELECT count(*) AS n FROM agent_memory")[0]["n"] == 0


def test_sql_statement_timeout(db: Database, tenant: NewTenant) -> None:
    query = "SELECT pg_sleep(2), %(tenant_id)s::uuid AS t"
    started = time.monotonic()
    with pytest.raises(SkillFailed) as failed:
        sql_template.run(_sql_ctx(db, tenant.tenant_id, query, timeout_ms=100), {})
    assert failed.value.code == "statement_timeout"
    assert failed.value.message == "the query took longer than 100 ms"
    assert time.monotonic() - started < 1.5


def test_sql_max_rows_truncates(db: Database, tenant: NewTenant) -> None:
    _remember(db, tenant.tenant_id, *(f"fact {i}" for i in range(5)))
    ctx = _sql_ctx(db, tenant.tenant_id, MEMORY_QUERY, max_rows=3)
    result = sql_template.run(ctx, {"category": "fact"})
    assert result["truncated"] is True and result["row_count"] == 3
    assert [row["content"] for row in result["rows"]] == ["fact 0", "fact 1", "fact 2"]


def test_sql_write_skill_writes_its_own_tenant_only(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    insert = (
        "INSERT INTO agent_memory (tenant_id, category, content) "
        "VALUES (%(tenant_id)s, 'fact', %(content)s) RETURNING tenant_id, content"
    )
    ctx = _sql_ctx(db, tenant.tenant_id, insert, side_effects="write")
    result = sql_template.run(ctx, {"content": "written"})
    assert result["rows"] == [{"tenant_id": str(tenant.tenant_id), "content": "written"}]

    # A template that names another tenant's id is stopped by the row policy.
    foreign = (
        "INSERT INTO agent_memory (tenant_id, category, content) "
        "VALUES (%(target)s::uuid, 'fact', 'x') RETURNING %(tenant_id)s::uuid AS t"
    )
    ctx = _sql_ctx(db, tenant.tenant_id, foreign, side_effects="write")
    with pytest.raises(SkillFailed) as failed:
        sql_template.run(ctx, {"target": str(other_tenant.tenant_id)})
    assert failed.value.code == "forbidden_row"
    with db.transaction(other_tenant.tenant_id) as tx:
        assert tx.sql("SELECT count(*) AS n FROM agent_memory")[0]["n"] == 0


def test_sql_error_in_template(db: Database, tenant: NewTenant) -> None:
    query = "SELECT no_such_column FROM agent_memory WHERE tenant_id = %(tenant_id)s"
    with pytest.raises(SkillFailed) as failed:
        sql_template.run(_sql_ctx(db, tenant.tenant_id, query), {})
    assert failed.value.code == "sql_error"


# --- lambda: ------------------------------------------------------------------------------


@pytest.fixture
def fresh_lambda_client() -> Iterator[None]:
    lambda_invoke.reset_client()
    yield
    lambda_invoke.reset_client()


def test_lambda_against_moto_without_docker(
    aws: MotoServer,
    fresh_lambda_client: None,
) -> None:

    # moto's "simple" Lambda backend answers invokes without Docker: it echoes the payload,
    # or returns results queued through /moto-api/static/lambda-simple/response.
    with aws.simple_lambda("crm-skill"):
        run_id = uuid.uuid4()
        ctx = make_ctx(None, uuid.uuid4(), "lambda:crm-skill", name="crm_lookup", run_id=run_id)

        echoed = lambda_invoke.run(ctx, {"customer": "c-1"})
        assert echoed == {
            "tenant_id": str(ctx.tenant_id),
            "skill": "crm_lookup",
            "arguments": {"customer": "c-1"},
            "actor": {"type": "user", "id": "user-1"},
            "run_id": str(run_id),
        }

        aws.queue_lambda_results({"found": True})
        assert lambda_invoke.run(ctx, {"customer": "c-1"}) == {"found": True}


@pytest.fixture
def lambda_endpoint(
    server: Served, monkeypatch: pytest.MonkeyPatch, fresh_lambda_client: None
) -> Served:
    """The test server, speaking the Lambda Invoke REST path, with boto3 pointed at it."""
    for name, value in {
        "AWS_ENDPOINT_URL": server.url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return server


def test_lambda_function_error(lambda_endpoint: Served) -> None:
    error = {
        "errorMessage": "customer c-9 does not exist",
        "errorType": "KeyError",
        "stackTrace": ['  File "/var/task/app.py", line 2'],
    }
    lambda_endpoint.answer = lambda h, body: _reply(
        h, 200, json.dumps(error).encode(), headers={"X-Amz-Function-Error": "Unhandled"}
    )
    ctx = make_ctx(None, uuid.uuid4(), "lambda:crm-skill", name="crm_lookup")

    with pytest.raises(SkillFailed) as failed:
        lambda_invoke.run(ctx, {"customer": "c-9"})

    assert failed.value.code == "lambda_error"
    assert "KeyError: customer c-9 does not exist" in failed.value.message
    assert "stackTrace" not in failed.value.message
    sent = lambda_endpoint.requests[0]
    assert sent["path"] == "/2015-03-31/functions/crm-skill/invocations"
    assert sent["headers"]["x-amz-invocation-type"] == "RequestResponse"
    assert json.loads(sent["body"])["arguments"] == {"customer": "c-9"}


def test_lambda_missing_function_is_a_lambda_error(lambda_endpoint: Served) -> None:
    lambda_endpoint.answer = lambda h, body: _reply(
        h,
        404,
        b'{"Type": "User", "message": "Function not found"}',
        headers={"x-amzn-ErrorType": "ResourceNotFoundException"},
    )
    ctx = make_ctx(None, uuid.uuid4(), "lambda:missing", name="crm_lookup")
    with pytest.raises(SkillFailed) as failed:
        lambda_invoke.run(ctx, {})
    assert failed.value.code == "lambda_error"
    assert "ResourceNotFoundException" in failed.value.message
    assert len(lambda_endpoint.requests) == 1  # no automatic retry


# --- problem() ----------------------------------------------------------------------------

GOOD_SQL = {"sql": {"query": MEMORY_QUERY, "max_rows": 10, "timeout_ms": 500}}


@pytest.mark.parametrize(
    ("handler", "config"),
    [
        ("webhook:https://hooks.example.com/flowpilot", {}),
        ("webhook:http://127.0.0.1:8080/hook", {"timeout_s": 5, "max_bytes": 10_000}),
        ("webhook:http://localhost/hook", {}),
        ("webhook:http://[::1]:9000/hook", {}),
        ("lambda:crm-skill", {}),
        ("lambda:crm-skill:live", {}),
        ("lambda:arn:aws:lambda:us-east-1:123456789012:function:crm-skill", {}),
        ("lambda:arn:aws:lambda:eu-west-1:123456789012:function:crm-skill:$LATEST", {}),
        ("sql:facts", GOOD_SQL),
        ("sql:facts", {"sql": {"query": "SELECT 'a%%' AS p WHERE %(tenant_id)s IS NOT NULL;"}}),
    ],
)
def test_problem_accepts(handler: str, config: dict[str, Any]) -> None:
    assert handler_problem(handler, config) is None


@pytest.mark.parametrize(
    ("handler", "config", "fragment"),
    [
        ("webhook:http://example.com/hook", {}, "https"),
        ("webhook:ftp://example.com/hook", {}, "https"),
        ("webhook:https://", {}, "no host"),
        ("webhook:https://example.com:notaport/", {}, "not a valid URL"),
        ("webhook:https://example.com/", {"timeout_s": -1}, "timeout_s"),
        ("webhook:https://example.com/", {"max_bytes": "big"}, "max_bytes"),
        ("lambda:has spaces", {}, "not a Lambda function"),
        ("lambda:arn:aws:s3:::bucket", {}, "not a Lambda function"),
        ("lambda:" + "x" * 171, {}, "not a Lambda function"),
        ("sql:facts", {}, "not defined"),
        ("sql:facts", {"sql": {"query": ""}}, "facts"),
        ("sql:facts", {"sql": {"query": "SELECT 1"}}, "%(tenant_id)s"),
        (
            "sql:facts",
            {"sql": {"query": "SELECT 1 WHERE %(tenant_id)s IS NULL; DELETE FROM signals"}},
            "single statement",
        ),
        ("sql:facts", {"sql": {"query": "SELECT %s, %(tenant_id)s"}}, "%(name)s"),
        ("sql:facts", {"sql": {"query": "SELECT %(x)d, %(tenant_id)s"}}, "%(name)s"),
    ],
)
def test_problem_refuses(handler: str, config: dict[str, Any], fragment: str) -> None:
    found = handler_problem(handler, config)
    assert found is not None and fragment in found
