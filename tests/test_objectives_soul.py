"""Objectives, the soul, the briefing and the heartbeat trigger: over HTTP and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowpilot.api.lambda_http import chat_handler
from flowpilot.db import Database
from flowpilot.tenancy import NewTenant, create_tenant
from flowpilot.testing.http import ApiResponse, call

NEW_OBJECTIVE: dict[str, Any] = {
    "goal": "Win back customers who have not booked in 90 days",
    "priority": 80,
    "success_criteria": ["20 lapsed customers rebook"],
    "kpis": [{"name": "rebookings", "target": 20, "unit": "bookings"}],
    "plan": ["List lapsed customers", "Draft a win-back email", "Send it"],
}


def auth(tenant: NewTenant) -> dict[str, str]:
    return {"authorization": f"Bearer {tenant.api_key}"}


def api(tenant: NewTenant, method: str, path: str, body: Any = None, **options: Any) -> ApiResponse:
    return call(chat_handler, method, path, headers=auth(tenant), body=body, **options)


def cli(db: Database, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": db.url, "FLOWPILOT_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "flowpilot.cli.main", *args],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


# --- objectives over HTTP ---------------------------------------------------------------


def test_objective_lifecycle(db: Database, tenant: NewTenant) -> None:
    created = api(tenant, "POST", "/objectives", NEW_OBJECTIVE)
    assert created.status == 201, created.body
    objective = created.body
    ref = objective["objective_id"]
    assert objective["status"] == "open" and objective["priority"] == 80
    assert [s["step"] for s in objective["progress"]["plan"]] == NEW_OBJECTIVE["plan"]
    assert objective["progress"]["cursor"] == 0 and objective["percent_done"] == 0
    assert objective["kpis"] == [
        {"name": "rebookings", "target": 20, "current": None, "unit": "bookings", "skill": None}
    ]

    assert api(tenant, "GET", f"/objectives/{ref}").body == objective
    assert [o["objective_id"] for o in api(tenant, "GET", "/objectives").body] == [ref]

    changed = api(
        tenant,
        "PATCH",
        f"/objectives/{ref}",
        {"priority": 90, "plan": ["List lapsed customers", "Send it"], "note": "trimmed"},
    )
    assert changed.status == 200, changed.body
    assert changed.body["priority"] == 90 and changed.body["goal"] == NEW_OBJECTIVE["goal"]
    assert [s["step"] for s in changed.body["progress"]["plan"]] == [
        "List lapsed customers",
        "Send it",
    ]
    assert changed.body["progress"]["notes"][-1]["note"] == "trimmed"

    paused = api(tenant, "POST", f"/objectives/{ref}/pause")
    assert paused.status == 200 and paused.body["status"] == "paused"
    assert api(tenant, "GET", "/objectives", query={"status": "open"}).body == []
    assert len(api(tenant, "GET", "/objectives", query={"status": "paused"}).body) == 1
    assert api(tenant, "POST", f"/objectives/{ref}/pause").body["status"] == "paused"

    resumed = api(tenant, "POST", f"/objectives/{ref}/resume")
    assert resumed.status == 200 and resumed.body["status"] == "open"

    done = api(tenant, "POST", f"/objectives/{ref}/complete", {"summary": "12 rebooked"})
    assert done.status == 200, done.body
    assert done.body["status"] == "completed" and done.body["completed_at"]
    assert done.body["progress"]["summary"] == "12 rebooked"
    assert api(tenant, "POST", f"/objectives/{ref}/complete").status == 200

    closed = api(tenant, "POST", f"/objectives/{ref}/resume")
    assert closed.status == 409 and closed.error_code == "objective_closed"
    refused = api(tenant, "PATCH", f"/objectives/{ref}", {"priority": 10})
    assert refused.status == 409 and refused.error_code == "objective_closed"

    kinds = db.all(tenant.tenant_id, "briefing_snapshot")[0]["briefing"]["recent_events"]
    assert {"objective_created", "objective_paused", "objective_completed"} <= {
        e["kind"] for e in kinds
    }


@pytest.mark.parametrize(
    "body",
    [
        {**NEW_OBJECTIVE, "priority": 101},
        {**NEW_OBJECTIVE, "goal": "   "},
        {**NEW_OBJECTIVE, "goal": ""},
        {**NEW_OBJECTIVE, "kpis": [{"name": "a", "target": 1}, {"name": "A", "target": 2}]},
        {**NEW_OBJECTIVE, "unexpected": True},
        {"priority": 10},
    ],
)
def test_invalid_objectives_are_422(db: Database, tenant: NewTenant, body: dict[str, Any]) -> None:
    reply = api(tenant, "POST", "/objectives", body)
    assert reply.status == 422, reply.body
    assert reply.error_code == "invalid_request"


def test_invalid_changes_are_422(db: Database, tenant: NewTenant) -> None:
    ref = api(tenant, "POST", "/objectives", NEW_OBJECTIVE).body["objective_id"]
    assert api(tenant, "PATCH", f"/objectives/{ref}", {"priority": 101}).status == 422
    assert api(tenant, "GET", "/objectives", query={"status": "lost"}).status == 422


def test_objectives_are_isolated_between_tenants(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    ref = api(tenant, "POST", "/objectives", NEW_OBJECTIVE).body["objective_id"]
    for method, path, body in (
        ("GET", f"/objectives/{ref}", None),
        ("PATCH", f"/objectives/{ref}", {"priority": 1}),
        ("POST", f"/objectives/{ref}/pause", None),
        ("POST", f"/objectives/{ref}/resume", None),
        ("POST", f"/objectives/{ref}/complete", None),
        ("GET", "/objectives/00000000-0000-4000-8000-000000000000", None),
    ):
        reply = api(other_tenant, method, path, body)
        assert reply.status == 404, (method, path, reply.body)
        assert reply.error_code == "objective_not_found"
    assert api(other_tenant, "GET", "/objectives").body == []
    assert api(tenant, "GET", f"/objectives/{ref}").body["status"] == "open"


# --- the soul ---------------------------------------------------------------------------

SOUL: dict[str, Any] = {
    "identity": "You are Pip, the office manager of Acme Plumbing.",
    "voice": "Warm, brief, never salesy.",
    "values": ["Customers first", "Say what you do not know"],
    "constraints": ["Never quote a price without a site visit", "Never email after 8pm"],
}


def test_soul_round_trip_and_it_leads_the_bootstrap(db: Database, tenant: NewTenant) -> None:
    from flowpilot.reasoning.bootstrap import perceive

    empty = api(tenant, "GET", "/soul")
    assert empty.status == 200
    assert empty.body["identity"] == "" and empty.body["constraints"] == []

    saved = api(tenant, "PUT", "/soul", SOUL)
    assert saved.status == 200, saved.body
    assert {k: saved.body[k] for k in SOUL} == SOUL
    assert {k: api(tenant, "GET", "/soul").body[k] for k in SOUL} == SOUL

    api(tenant, "POST", "/objectives", NEW_OBJECTIVE)
    perception = perceive(db, tenant.tenant_id, "hello")
    prompt = perception.prompt
    for text in (SOUL["identity"], SOUL["voice"], *SOUL["values"], *SOUL["constraints"]):
        assert text in prompt
    assert prompt.index(SOUL["identity"]) < prompt.index(NEW_OBJECTIVE["goal"])
    assert prompt.index(SOUL["constraints"][0]) < prompt.index(NEW_OBJECTIVE["goal"])
    assert perception.constraints == SOUL["constraints"]

    # PUT replaces: what is left out goes, from the bootstrap too.
    fewer = api(tenant, "PUT", "/soul", {"identity": "You are Pip.", "constraints": ["Be kind"]})
    assert fewer.body["values"] == [] and fewer.body["voice"] == ""
    assert perceive(db, tenant.tenant_id, "hello").constraints == ["Be kind"]


@pytest.mark.parametrize(
    "body",
    [
        {"identity": "x" * 2001},
        {"values": ["v"] * 21},
        {"constraints": ["c" * 301]},
        {"mood": "sunny"},
    ],
)
def test_invalid_souls_are_422(db: Database, tenant: NewTenant, body: dict[str, Any]) -> None:
    reply = api(tenant, "PUT", "/soul", body)
    assert reply.status == 422, reply.body


def test_soul_is_per_tenant(db: Database, tenant: NewTenant, other_tenant: NewTenant) -> None:
    api(tenant, "PUT", "/soul", SOUL)
    assert api(other_tenant, "GET", "/soul").body["identity"] == ""


# --- briefing and heartbeat ---------------------------------------------------------------


def test_briefing_returns_its_sections(db: Database, tenant: NewTenant) -> None:
    api(tenant, "POST", "/objectives", NEW_OBJECTIVE)
    reply = api(tenant, "GET", "/briefing")
    assert reply.status == 200, reply.body
    assert {
        "summary",
        "approvals",
        "objectives",
        "recent_events",
        "failures",
        "signals_waiting",
        "tokens",
        "flagged_skills",
    } <= set(reply.body)
    assert reply.body["objectives"][0]["goal"] == NEW_OBJECTIVE["goal"]
    assert reply.body["objectives"][0]["steps_total"] == 3
    assert NEW_OBJECTIVE["goal"][:40] in reply.body["summary"]


def test_heartbeat_route_is_for_platform_admins(db: Database, tenant: NewTenant) -> None:
    refused = api(tenant, "POST", "/heartbeat")
    assert refused.status == 403 and refused.error_code == "platform_admin_only"

    admin = create_tenant(db, "P", scopes=("*", "platform:admin"))
    reply = api(admin, "POST", "/heartbeat")
    assert reply.status == 200, reply.body
    assert len(reply.body) == 1
    assert reply.body[0]["tenant_id"] == str(admin.tenant_id)
    assert {"outcome", "model_calls", "tokens", "objective_id", "skill", "reason"} <= set(
        reply.body[0]
    )


# --- the CLI ----------------------------------------------------------------------------


def test_cli_objectives_create_and_list(db: Database, tenant: NewTenant, tmp_path: Path) -> None:
    made = cli(
        db, tmp_path, "objectives", "create", "Answer every quote request within a day",
        "--priority", "70", "--criterion", "no request waits over 24h",
        "--kpi", "response_hours:24:hours", "--step", "Find open requests",
        "--step", "Reply to each", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    objective = json.loads(made.stdout)
    assert objective["priority"] == 70
    assert objective["kpis"] == [
        {"name": "response_hours", "target": 24, "current": None, "unit": "hours", "skill": None}
    ]
    assert len(objective["progress"]["plan"]) == 2

    listed = cli(db, tmp_path, "objectives", "list", "--status", "open", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [o["objective_id"] for o in json.loads(listed.stdout)] == [objective["objective_id"]]

    paused = cli(db, tmp_path, "objectives", "pause", objective["objective_id"], "--json")
    assert paused.returncode == 0 and json.loads(paused.stdout)["status"] == "paused"

    bad = cli(db, tmp_path, "objectives", "create", "Too keen", "--priority", "101")
    assert bad.returncode == 2 and "invalid_request" in bad.stderr


def test_cli_soul_set_keeps_the_fields_not_given(
    db: Database, tenant: NewTenant, tmp_path: Path
) -> None:
    first = cli(
        db, tmp_path, "soul", "set", "--identity", "You are Pip.", "--constraint", "No spam",
        "--constraint", "No prices by email", "--json",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    second = cli(db, tmp_path, "soul", "set", "--voice", "Plain and warm", "--json")
    assert second.returncode == 0, second.stderr
    shown = cli(db, tmp_path, "soul", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    soul = json.loads(shown.stdout)
    assert soul["identity"] == "You are Pip." and soul["voice"] == "Plain and warm"
    assert soul["constraints"] == ["No spam", "No prices by email"]

    human = cli(db, tmp_path, "soul", "show")
    assert "You are Pip." in human.stdout and not human.stdout.startswith("{")


def test_cli_heartbeat_prints_one_json_line(
    db: Database, tenant: NewTenant, tmp_path: Path
) -> None:
    done = cli(db, tmp_path, "heartbeat", "--tenant", str(tenant.tenant_id), "--json")
    assert done.returncode in (0, 1), done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert report["tenant_id"] == str(tenant.tenant_id) and "outcome" in report
