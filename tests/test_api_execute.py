"""agent-execute and approvals over HTTP: API Gateway v2 events through Mangum and FastAPI."""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowpilot.api.lambda_http import chat_handler
from flowpilot.db import Database
from flowpilot.execute.lambda_entry import handle_event
from flowpilot.tenancy import NewTenant
from flowpilot.testing.http import call

EMAIL = {"to": "pat@example.com", "subject": "Your quote", "body": "Attached."}


def auth(tenant: NewTenant) -> dict[str, str]:
    return {"authorization": f"Bearer {tenant.api_key}"}


def test_execute_runs_a_skill_for_the_authenticated_tenant(db: Database, tenant: NewTenant) -> None:
    note = {"content": "Gate code is 4411", "category": "fact", "key": None, "importance": None,
            "expires_in_days": None}  # fmt: skip
    reply = call(handle_event, "POST", "/execute", headers=auth(tenant),
                 body={"skill": "memory_write", "arguments": note})  # fmt: skip
    assert reply.status == 200 and reply.body["status"] == "executed"
    found = call(handle_event, "POST", "/execute", headers={"x-api-key": tenant.api_key},
                 body={"skill": "memory_search", "arguments": {"query": "gate code",
                       "category": None, "limit": None}})  # fmt: skip
    assert found.status == 200
    assert "4411" in json.dumps(found.body["result"])


def test_the_body_cannot_choose_the_tenant(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    reply = call(handle_event, "POST", "/execute", headers=auth(tenant),
                 body={"skill": "get_briefing", "arguments": {},
                       "tenant_id": str(other_tenant.tenant_id)})  # fmt: skip
    assert reply.status == 422 and reply.error_code == "invalid_request"


@pytest.mark.parametrize(
    "headers",
    [{}, {"authorization": "Bearer fp_not_a_real_key"}, {"authorization": "Basic abc"},
     {"x-api-key": "nope"}],
)  # fmt: skip
def test_missing_or_bad_credentials_are_401(db: Database, headers: dict[str, str]) -> None:
    reply = call(handle_event, "POST", "/execute", headers=headers, body={"skill": "x"})
    assert reply.status == 401
    assert reply.error_code in {"missing_credentials", "invalid_api_key", "invalid_token"}
    assert "Traceback" not in json.dumps(reply.body)


def test_an_oversized_body_is_refused_before_anything_runs(db: Database, tenant: NewTenant) -> None:
    huge = {"skill": "memory_write", "arguments": {"content": "x" * 300_000}}
    reply = call(handle_event, "POST", "/execute", headers=auth(tenant), body=huge)
    assert reply.status == 413 and reply.error_code == "payload_too_large"


def test_malformed_json_is_a_clear_422(db: Database, tenant: NewTenant) -> None:
    reply = call(handle_event, "POST", "/execute", headers=auth(tenant), raw_body="{nope",
                 )  # fmt: skip
    assert reply.status == 422 and reply.error_code == "invalid_request"


def test_approval_flow_over_http_runs_the_email_once(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    asked = call(handle_event, "POST", "/execute", headers=auth(tenant),
                 body={"skill": "send_email", "arguments": EMAIL})  # fmt: skip
    assert asked.status == 202 and asked.body["status"] == "pending_approval"
    approval_id = asked.body["approval_id"]

    listed = call(chat_handler, "GET", "/approvals", headers=auth(tenant))
    assert [a["approval_id"] for a in listed.body] == [approval_id]
    assert call(chat_handler, "GET", "/approvals", headers=auth(other_tenant)).body == []

    foreign = call(chat_handler, "POST", f"/approvals/{approval_id}/approve",
                   headers=auth(other_tenant))  # fmt: skip
    assert foreign.status == 404

    decided = call(chat_handler, "POST", f"/approvals/{approval_id}/approve", headers=auth(tenant))
    assert decided.status == 200
    assert decided.body["execution"]["status"] == "executed"
    assert decided.body["approval"]["status"] == "executed"
    again = call(chat_handler, "POST", f"/approvals/{approval_id}/approve", headers=auth(tenant))
    assert again.status == 409 and again.error_code == "approval_executed"
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM mailbox").fetchone()["n"] == 1


def test_skills_list_and_lint_routes(db: Database, tenant: NewTenant) -> None:
    listed = call(chat_handler, "GET", "/skills", headers=auth(tenant))
    names = {s["name"] for s in listed.body}
    assert {"send_email", "memory_write", "get_briefing"} <= names
    lint = call(chat_handler, "GET", "/skills/lint", headers=auth(tenant))
    assert lint.status == 200 and lint.body == {"clean": True, "findings": []}


def test_openapi_describes_every_route(db: Database) -> None:
    spec: dict[str, Any] = call(chat_handler, "GET", "/openapi.json").body
    assert {"/health", "/approvals", "/skills", "/skills/lint"} <= set(spec["paths"])


def test_model_routing_shows_the_rule_and_only_platform_admins_change_it(
    db: Database, tenant: NewTenant
) -> None:
    shown = call(chat_handler, "GET", "/model-routing/functions/chat", headers=auth(tenant))
    assert shown.status == 200
    assert shown.body["provider"] == "heuristic" and shown.body["source"] == "offline"
    change = {"provider": "openai", "model": "gpt-4o", "tier": "standard", "base_url": None}
    denied = call(chat_handler, "PUT", "/model-routing/functions/chat", headers=auth(tenant),
                  body=change)  # fmt: skip
    assert denied.status == 403 and denied.error_code == "platform_admin_only"
    unknown = call(chat_handler, "GET", "/model-routing/functions/poetry", headers=auth(tenant))
    assert unknown.status == 422


def test_a_platform_admin_changes_a_route_and_history_is_kept(db: Database) -> None:
    from flowpilot.tenancy import create_tenant

    admin = create_tenant(db, "Platform", scopes=("*", "platform:admin"))
    change = {"provider": "heuristic", "model": "heuristic-v1", "tier": "cheap", "base_url": None}
    changed = call(chat_handler, "PUT", "/model-routing/functions/heartbeat", headers=auth(admin),
                   body=change)  # fmt: skip
    assert changed.status == 200, changed.body
    assert changed.body["tier"] == "cheap"
    assert len(changed.body["overrides"]) == 1
    assert "fp_" not in json.dumps(changed.body)  # no credential is ever shown
