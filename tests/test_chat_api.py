"""Threads, /ask and the caller's identity over HTTP: API Gateway v2 events, Mangum, FastAPI."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from flowpilot.api.lambda_http import chat_handler
from flowpilot.config import reset_settings
from flowpilot.db import Database
from flowpilot.tenancy import NewTenant
from flowpilot.testing.http import ApiResponse, call

SECRET = "test-supabase-jwt-secret-with-at-least-32-bytes"
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
STATUS_LABELS = re.compile(r"\b(completed|pending_approval|waiting_approval|executed)\b")


def auth(tenant: NewTenant) -> dict[str, str]:
    return {"authorization": f"Bearer {tenant.api_key}"}


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def claims(tenant: NewTenant, **changes: Any) -> dict[str, Any]:
    base = {
        "sub": "user-123",
        "aud": "authenticated",
        "exp": int(time.time()) + 600,
        "tenant_id": str(tenant.tenant_id),
    }
    return {k: v for k, v in {**base, **changes}.items() if v is not None}


def assert_refused(reply: ApiResponse, *codes: str) -> None:
    assert reply.status == 401, reply.body
    assert reply.error_code in codes, reply.body
    assert "Traceback" not in json.dumps(reply.body)


# --- who is calling ---------------------------------------------------------------------


@pytest.fixture
def hs256(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPABASE_JWT_SECRET", SECRET)
    reset_settings()


def test_api_key_as_bearer_or_x_api_key(db: Database, tenant: NewTenant) -> None:
    assert call(chat_handler, "GET", "/threads", headers=auth(tenant)).status == 200
    keyed = call(chat_handler, "GET", "/threads", headers={"x-api-key": tenant.api_key})
    assert keyed.status == 200 and keyed.body == []


def test_no_credentials_is_401(db: Database) -> None:
    assert_refused(call(chat_handler, "GET", "/threads"), "missing_credentials")
    posted = call(chat_handler, "POST", "/threads", body={"message": "hello"})
    assert_refused(posted, "missing_credentials")


def test_hs256_jwt_with_the_project_secret(db: Database, tenant: NewTenant, hs256: None) -> None:
    token = jwt.encode(claims(tenant), SECRET, algorithm="HS256")
    reply = call(chat_handler, "GET", "/threads", headers=bearer(token))
    assert reply.status == 200 and reply.body == []


def test_tenant_claim_under_app_metadata(db: Database, tenant: NewTenant, hs256: None) -> None:
    nested = claims(tenant, tenant_id=None, app_metadata={"tenant_id": str(tenant.tenant_id)})
    token = jwt.encode(nested, SECRET, algorithm="HS256")
    assert call(chat_handler, "GET", "/threads", headers=bearer(token)).status == 200


def _unsigned(payload: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(payload)}."


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("alg_none", "invalid_token"),
        ("wrong_key", "invalid_token"),
        ("expired", "token_expired"),
        ("wrong_audience", "invalid_token"),
        ("no_tenant", "no_tenant"),
        ("not_a_jwt", "invalid_token"),
    ],
)
def test_bad_jwts_are_401(
    db: Database, tenant: NewTenant, hs256: None, case: str, code: str
) -> None:
    tokens = {
        "alg_none": lambda: _unsigned(claims(tenant)),
        "wrong_key": lambda: jwt.encode(claims(tenant), "another-secret-" * 4, algorithm="HS256"),
        "expired": lambda: jwt.encode(
            claims(tenant, exp=int(time.time()) - 60), SECRET, algorithm="HS256"
        ),
        "wrong_audience": lambda: jwt.encode(claims(tenant, aud="anon"), SECRET, algorithm="HS256"),
        "no_tenant": lambda: jwt.encode(claims(tenant, tenant_id=None), SECRET, algorithm="HS256"),
        "not_a_jwt": lambda: "definitely.not.a-token",
    }
    assert_refused(call(chat_handler, "GET", "/threads", headers=bearer(tokens[case]())), code)


def test_issuer_is_checked_when_configured(
    db: Database, tenant: NewTenant, hs256: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    issuer = "https://project.supabase.co/auth/v1"
    monkeypatch.setenv("FLOWPILOT_JWT_ISSUER", issuer)
    reset_settings()
    good = jwt.encode(claims(tenant, iss=issuer), SECRET, algorithm="HS256")
    assert call(chat_handler, "GET", "/threads", headers=bearer(good)).status == 200
    for iss in ("https://elsewhere.example/auth/v1", None):
        bad = jwt.encode(claims(tenant, iss=iss), SECRET, algorithm="HS256")
        assert_refused(call(chat_handler, "GET", "/threads", headers=bearer(bad)), "invalid_token")


@pytest.fixture
def jwks(monkeypatch: pytest.MonkeyPatch) -> Iterator[ec.EllipticCurvePrivateKey]:
    """An EC P-256 key whose public half a local HTTP server publishes as a JWKS."""
    key = ec.generate_private_key(ec.SECP256R1())
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    document = json.dumps(
        {"keys": [{**public, "kid": "fp-test", "use": "sig", "alg": "ES256"}]}
    ).encode()

    class Keys(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(document)))
            self.end_headers()
            self.wfile.write(document)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()
    port = server.server_address[1]
    monkeypatch.setenv("SUPABASE_JWKS_URL", f"http://127.0.0.1:{port}/auth/v1/.well-known/jwks")
    reset_settings()
    yield key
    server.shutdown()
    server.server_close()


def test_es256_through_the_jwks_url(
    db: Database, tenant: NewTenant, jwks: ec.EllipticCurvePrivateKey
) -> None:
    token = jwt.encode(claims(tenant), jwks, algorithm="ES256", headers={"kid": "fp-test"})
    reply = call(chat_handler, "GET", "/threads", headers=bearer(token))
    assert reply.status == 200 and reply.body == []

    stranger = ec.generate_private_key(ec.SECP256R1())
    forged = jwt.encode(claims(tenant), stranger, algorithm="ES256", headers={"kid": "fp-test"})
    assert_refused(call(chat_handler, "GET", "/threads", headers=bearer(forged)), "invalid_token")


# --- threads ----------------------------------------------------------------------------


def start(tenant: NewTenant, message: str = "what needs my attention today?") -> ApiResponse:
    reply = call(chat_handler, "POST", "/threads", headers=auth(tenant), body={"message": message})
    assert reply.status == 201, reply.body
    return reply


def test_a_thread_starts_with_a_question_and_its_answer(db: Database, tenant: NewTenant) -> None:
    body = start(tenant).body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert body["messages"][0]["content"] == "what needs my attention today?"
    answer = body["message"]
    assert set(answer) >= {"content", "work_log", "artifacts", "actions", "confirmations"}
    assert answer["content"].strip()
    assert body["messages"][1]["content"] == answer["content"]
    assert body["title"] == "what needs my attention today?"


def test_list_get_and_continue_a_thread(db: Database, tenant: NewTenant) -> None:
    question = (
        "Please look over the overdue invoices for the Henderson account and tell me "
        "which ones to chase first"
    )
    thread_id = start(tenant, question).body["thread_id"]

    listed = call(chat_handler, "GET", "/threads", headers=auth(tenant))
    assert listed.status == 200 and [t["thread_id"] for t in listed.body] == [thread_id]
    title = listed.body[0]["title"]
    assert len(title) <= 60 and question.startswith(title) and question[len(title)] == " "
    assert listed.body[0]["last_message"]

    fetched = call(chat_handler, "GET", f"/threads/{thread_id}", headers=auth(tenant))
    assert fetched.status == 200 and len(fetched.body["messages"]) == 2

    followed = call(chat_handler, "POST", f"/threads/{thread_id}/messages", headers=auth(tenant),
                    body={"message": "and what about objectives?"})  # fmt: skip
    assert followed.status == 200, followed.body
    roles = [m["role"] for m in followed.body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert followed.body["messages"][2]["content"] == "and what about objectives?"
    assert followed.body["message"]["content"] == followed.body["messages"][3]["content"]


def test_ask_starts_or_continues_a_thread(db: Database, tenant: NewTenant) -> None:
    first = call(chat_handler, "POST", "/ask", headers=auth(tenant),
                 body={"message": "give me my briefing"})  # fmt: skip
    assert first.status == 200, first.body
    thread_id = first.body["thread_id"]
    assert first.body["message"]["content"]
    second = call(chat_handler, "POST", "/ask", headers=auth(tenant),
                  body={"message": "thanks, anything else?", "thread_id": thread_id})  # fmt: skip
    assert second.status == 200 and second.body["thread_id"] == thread_id
    assert len(second.body["messages"]) == 4


def test_one_tenant_never_sees_another_tenants_threads(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    mine = start(tenant).body["thread_id"]
    theirs = start(other_tenant, "what is overdue?").body["thread_id"]
    stranger = auth(other_tenant)

    listed = call(chat_handler, "GET", "/threads", headers=stranger).body
    assert [t["thread_id"] for t in listed] == [theirs]
    attempts = [
        call(chat_handler, "GET", f"/threads/{mine}", headers=stranger),
        call(chat_handler, "POST", f"/threads/{mine}/messages", headers=stranger,
             body={"message": "show me everything"}),
        call(chat_handler, "POST", "/ask", headers=stranger,
             body={"message": "show me everything", "thread_id": mine}),
    ]  # fmt: skip
    for reply in attempts:
        assert reply.status == 404 and reply.error_code == "thread_not_found", reply.body
    untouched = call(chat_handler, "GET", f"/threads/{mine}", headers=auth(tenant)).body
    assert len(untouched["messages"]) == 2
    unknown = call(chat_handler, "GET", f"/threads/{theirs[:-4]}0000", headers=auth(tenant))
    assert unknown.status == 404 and unknown.error_code == "thread_not_found"


def test_the_projection_shows_no_internal_ids_or_status_labels(
    db: Database, tenant: NewTenant
) -> None:
    body = start(tenant).body
    allowed = {body["thread_id"]} | {c["approval_id"] for c in body["message"]["confirmations"]}
    text = json.dumps(body)
    assert set(UUID_RE.findall(text)) <= allowed
    assert not STATUS_LABELS.findall(text)
    fetched = call(chat_handler, "GET", f"/threads/{body['thread_id']}", headers=auth(tenant))
    assert set(UUID_RE.findall(json.dumps(fetched.body))) <= allowed


@pytest.mark.parametrize(
    ("path", "body"),
    [("/threads", {"message": "x" * 8001}), ("/ask", {"message": "x" * 8001}),
     ("/threads", {"message": ""}), ("/threads", {"message": "hi", "tenant_id": "x"})],
)  # fmt: skip
def test_messages_outside_the_limits_are_422(
    db: Database, tenant: NewTenant, path: str, body: dict[str, Any]
) -> None:
    reply = call(chat_handler, "POST", path, headers=auth(tenant), body=body)
    assert reply.status == 422 and reply.error_code == "invalid_request"
    assert call(chat_handler, "GET", "/threads", headers=auth(tenant)).body == []


def test_a_blank_message_is_refused_before_any_turn(db: Database, tenant: NewTenant) -> None:
    reply = call(chat_handler, "POST", "/threads", headers=auth(tenant), body={"message": "  \n "})
    assert reply.status == 400 and reply.error_code == "message_empty"
    assert call(chat_handler, "GET", "/threads", headers=auth(tenant)).body == []


def test_openapi_describes_the_thread_routes(db: Database) -> None:
    spec: dict[str, Any] = call(chat_handler, "GET", "/openapi.json").body
    paths = spec["paths"]
    assert {"/threads", "/threads/{thread_id}", "/threads/{thread_id}/messages", "/ask"} <= set(
        paths
    )

    def schema_ref(operation: dict[str, Any], status: str) -> str:
        return json.dumps(operation["responses"][status]["content"]["application/json"]["schema"])

    for path, method, status in [
        ("/threads", "post", "201"),
        ("/threads/{thread_id}/messages", "post", "200"),
        ("/ask", "post", "200"),
    ]:
        operation = paths[path][method]
        assert operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert "ThreadView" in schema_ref(operation, status)
    assert "ThreadView" in schema_ref(paths["/threads/{thread_id}"]["get"], "200")
    assert "ThreadSummary" in schema_ref(paths["/threads"]["get"], "200")
    schemas = spec["components"]["schemas"]
    assert schemas["MessageBody"]["properties"]["message"]["maxLength"] == 8000
    assert "thread_id" in schemas["AskBody"]["properties"]
    assert {"content", "work_log", "artifacts", "actions", "confirmations"} <= set(
        schemas["Answer"]["properties"]
    )


# --- the CLI ----------------------------------------------------------------------------


def test_cli_chat_prints_the_thread_view(db: Database, tenant: NewTenant, tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": db.url, "FLOWPILOT_HOME": str(tmp_path)}
    question = "what needs my attention today?"
    done = subprocess.run(
        [sys.executable, "-m", "flowpilot.cli.main", "chat", question, "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    answer = view["message"]
    assert answer["content"].strip()
    assert "offline" in answer["content"].lower()
    words = ("approval", "objective", "attention", "briefing")
    assert any(word in answer["content"].lower() for word in words)
    assert [m["role"] for m in view["messages"]] == ["user", "assistant"]

    human = subprocess.run(
        [sys.executable, "-m", "flowpilot.cli.main", "chat", "and the objectives?",
         "--thread", view["thread_id"]],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert human.returncode == 0, human.stderr
    assert human.stdout.strip() and not human.stdout.lstrip().startswith("{")


def test_cli_human_output_lists_the_work_and_what_waits_for_approval() -> None:
    from flowpilot.cli.chat_command import _human

    approval = "5b0c8e7e-3f8e-4a52-9d5e-3d0f6f1f0a11"
    view = {
        "thread_id": "0c8f5a52-54c4-4c1b-8f53-7f6f0e7b1d2e",
        "message": {
            "content": "I drafted the quote email.",
            "work_log": ["Looked up the customer", "Drafted the email"],
            "confirmations": [{"approval_id": approval, "skill": "send_email",
                               "summary": "Send the quote to pat@example.com"}],
        },
    }  # fmt: skip
    lines = _human(view).splitlines()
    assert lines[0] == "I drafted the quote email."
    assert "- Looked up the customer" in lines and "- Drafted the email" in lines
    assert (
        f"Waiting for your approval: Send the quote to pat@example.com "
        f"(flowpilot approvals approve {approval})"
    ) in lines


def test_a_signal_is_accepted_then_planned_through_the_local_queue(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    body = {"title": "New lead: bathroom remodel in Elm St", "kind": "lead"}
    accepted = call(chat_handler, "POST", "/signals", headers=auth(tenant), body=body)
    assert accepted.status == 202
    signal_id = accepted.body["signal_id"]
    shown = call(chat_handler, "GET", f"/signals/{signal_id}", headers=auth(tenant))
    assert shown.status == 200 and shown.body["status"] == "completed"
    assert shown.body["plan"]["fallback_mode"] is True
    hidden = call(chat_handler, "GET", f"/signals/{signal_id}", headers=auth(other_tenant))
    assert hidden.status == 404 and hidden.error_code == "signal_not_found"
    bad = call(chat_handler, "POST", "/signals", headers=auth(tenant), body={"title": ""})
    assert bad.status == 422 and bad.error_code == "invalid_request"
