"""The ``flowpilot`` command, run as a real process against a real PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowpilot.db import Database
from flowpilot.execute.models import Actor, ExecuteRequest
from flowpilot.execute.service import execute
from flowpilot.skills.linter import lint_files
from flowpilot.skills.spec import builtin_pack
from flowpilot.tenancy import NewTenant, hash_api_key

ROOT = Path(__file__).resolve().parents[1]
DEFECTS = ROOT / "tests" / "fixtures" / "packs" / "defects.yaml"
EMAIL = {"to": "pat@example.com", "subject": "Your quote", "body": "Here it is."}

SMALL_PACK = """\
pack: cli_test
skills:
  - name: supplier_terms
    category: suppliers
    side_effects: read
    handler: internal:memory_search
    description: >-
      Look up a supplier's delivery terms and lead times from stored notes.
      Use when: the user asks how long a supplier takes to deliver.
      NOT for: placing orders with the supplier.
    parameters:
      type: object
      additionalProperties: false
      required: [query, category, limit]
      properties:
        query: {type: string}
        category: {type: ["string", "null"], enum: [fact, preference, null]}
        limit: {type: ["integer", "null"], minimum: 1, maximum: 20}
"""


class Cli:
    """Runs ``python -m flowpilot.cli.main`` with the test database and its own home."""

    def __init__(self, db: Database, home: Path) -> None:
        # Nothing from the outer environment may send mail or queue signals for real.
        skip = {"SENDER_EMAIL", "SIGNAL_QUEUE_URL"}
        self.env = {k: v for k, v in os.environ.items() if k not in skip}
        self.env.update({"DATABASE_URL": db.url, "FLOWPILOT_HOME": str(home)})

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flowpilot.cli.main", *args],
            env=self.env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    def json(self, *args: str) -> Any:
        done = self.run(*args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def cli(db: Database, tmp_path: Path) -> Cli:
    return Cli(db, tmp_path / "home")


def _pending_email(db: Database, tenant: NewTenant, **arguments: Any) -> str:
    request = ExecuteRequest(
        tenant_id=tenant.tenant_id,
        actor=Actor(type="user", id="owner"),
        skill="send_email",
        arguments={**EMAIL, **arguments},
    )
    pending = execute(request, db=db)
    assert pending.status == "pending_approval" and pending.approval_id is not None
    return str(pending.approval_id)


def test_tenant_create_prints_the_key_once_and_stores_only_its_hash(cli: Cli, db: Database) -> None:
    created = cli.json("tenant", "create", "Harbor Plumbing", "--json")

    key = created["api_key"]
    assert key.startswith("fp_") and len(key) > 40
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT key_hash, prefix FROM api_keys WHERE tenant_id = %s", (created["tenant_id"],)
        ).fetchall()
        # The key itself is nowhere in the table, in any column.
        leaked = conn.execute(
            "SELECT count(*) AS n FROM api_keys k WHERE strpos(k::text, %s) > 0", (key,)
        ).fetchone()
    assert rows == [{"key_hash": hash_api_key(key), "prefix": key[:8]}]
    assert leaked["n"] == 0


def test_skills_list_and_sync(cli: Cli, tenant: NewTenant, tmp_path: Path) -> None:
    tenant_id = str(tenant.tenant_id)
    listed = cli.json("skills", "list", "--tenant", tenant_id, "--json")
    builtin = sorted(skill.name for skill in builtin_pack().skills)
    assert len(builtin) == 10
    assert sorted(skill["name"] for skill in listed) == builtin

    pack = tmp_path / "suppliers.yaml"
    pack.write_text(SMALL_PACK)
    first = cli.json("skills", "sync", str(pack), "--tenant", tenant_id, "--json")
    assert first == {"inserted": ["supplier_terms"], "updated": [], "unchanged": []}
    second = cli.json("skills", "sync", str(pack), "--tenant", tenant_id, "--json")
    assert second == {"inserted": [], "updated": [], "unchanged": ["supplier_terms"]}
    names = {skill["name"] for skill in cli.json("skills", "list", "--tenant", tenant_id, "--json")}
    assert names == {*builtin, "supplier_terms"}


def test_skills_lint_reports_each_finding_and_exits_by_outcome(cli: Cli) -> None:
    found = cli.run("skills", "lint", str(DEFECTS))

    assert found.returncode == 1, found.stderr
    lines = found.stdout.splitlines()
    findings = lint_files([DEFECTS])
    assert len(lines) == len(findings) >= 14
    for line, finding in zip(lines, findings, strict=True):
        assert line.startswith(f"{DEFECTS}: {finding.skill}: {finding.rule}: ")
    assert any(": poison_bidi_skill: tool_poisoning: " in line for line in lines)

    clean = cli.run("skills", "lint")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout.strip() == "no findings"


def test_approvals_list_approve_and_reject(cli: Cli, db: Database, tenant: NewTenant) -> None:
    tenant_id = str(tenant.tenant_id)
    approve_id = _pending_email(db, tenant)
    reject_id = _pending_email(db, tenant, to="sam@example.com")

    pending = cli.json("approvals", "list", "--tenant", tenant_id, "--json")
    assert {row["approval_id"] for row in pending} == {approve_id, reject_id}
    assert {row["skill"] for row in pending} == {"send_email"}

    approved = cli.json("approvals", "approve", approve_id, "--tenant", tenant_id, "--json")
    # The approval is returned as it ends up: approved, then run once by the follow-through.
    assert approved["approval"]["status"] == "executed"
    assert approved["approval"]["decided_by"] == "cli"
    assert approved["execution"]["status"] == "executed"
    mail = cli.json("mail", "--tenant", tenant_id, "--json")
    assert [(m["recipient"], m["subject"]) for m in mail] == [("pat@example.com", "Your quote")]

    rejected = cli.json("approvals", "reject", reject_id, "--tenant", tenant_id, "--json")
    assert rejected == {"approval": rejected["approval"], "execution": None}
    assert rejected["approval"]["status"] == "rejected"
    assert cli.json("approvals", "list", "--tenant", tenant_id, "--json") == []
    assert len(cli.json("mail", "--tenant", tenant_id, "--json")) == 1


def test_db_url_prints_the_database_url(cli: Cli, db: Database) -> None:
    assert cli.json("db", "url", "--json") == {"url": db.url}


def test_seed_demo_then_objectives_and_a_heartbeat(cli: Cli) -> None:
    demo = cli.json("seed", "demo", "--json")
    assert demo["api_key"].startswith("fp_")
    tenant_id = demo["tenant_id"]

    objectives = cli.json("objectives", "list", "--tenant", tenant_id, "--json")
    assert len(objectives) == 3

    beat = cli.run("heartbeat", "--tenant", tenant_id, "--json")
    assert beat.returncode == 0, beat.stderr
    reports = [json.loads(line) for line in beat.stdout.splitlines()]
    assert reports, "a tenant ticked by name reports its tick"
    for report in reports:
        assert report["tenant_id"] == tenant_id
        assert report["outcome"] in {"executed", "idle"}, report


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("approvals", "approve", "not-a-uuid"), "invalid UUID value: 'not-a-uuid'"),
        (("skills", "list", "--tenant", "acme"), "error [invalid_tenant]: not a tenant id: 'acme'"),
        (("heartbeat", "--tenant", "acme"), "error [invalid_tenant]: not a tenant id: 'acme'"),
    ],
    ids=["argparse-type", "skills-tenant", "heartbeat-tenant"],
)
def test_a_bad_argument_exits_non_zero_with_a_clear_message(
    cli: Cli, args: tuple[str, ...], message: str
) -> None:
    done = cli.run(*args)

    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
