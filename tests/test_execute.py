"""agent-execute: trust gating, approvals, idempotency and audit on real PostgreSQL."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from flowpilot.db import Database
from flowpilot.execute import approvals
from flowpilot.execute.lambda_entry import handle_direct
from flowpilot.execute.models import Actor, ExecuteRequest, ExecuteResult
from flowpilot.execute.service import execute
from flowpilot.skills.registry import sync_packs
from flowpilot.skills.scorer import SkillDoc, SkillIndex
from flowpilot.skills.spec import parse_pack
from flowpilot.tenancy import NewTenant

EMAIL = {"to": "pat@example.com", "subject": "Your quote", "body": "Here it is."}
USER = Actor(type="user", id="owner")
MODEL = Actor(type="flowpilot", id="engine")


def request(
    tenant: NewTenant, skill: str, arguments: dict[str, Any], **extra: Any
) -> ExecuteRequest:
    return ExecuteRequest(
        tenant_id=tenant.tenant_id, actor=extra.pop("actor", USER), skill=skill,
        arguments=arguments, **extra,
    )  # fmt: skip


def count(db: Database, sql: str, *params: Any) -> int:
    with db.connection() as conn:
        return int(conn.execute(sql, params).fetchone()["n"])


def mails(db: Database) -> int:
    return count(db, "SELECT count(*) AS n FROM mailbox")


def concurrently(n: int, work: Callable[[], ExecuteResult]) -> list[ExecuteResult]:
    barrier = threading.Barrier(n)
    results: list[ExecuteResult] = []
    errors: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            results.append(work())
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


def test_an_approve_skill_waits_for_a_person_and_runs_once(db: Database, tenant: NewTenant) -> None:
    pending = execute(request(tenant, "send_email", EMAIL), db=db)
    assert pending.status == "pending_approval" and pending.trust_level == "approve"
    assert mails(db) == 0
    assert pending.approval_id is not None
    approvals.decide(db, tenant.tenant_id, pending.approval_id, approve=True, by="owner")
    assert mails(db) == 0

    def follow_through() -> ExecuteResult:
        return execute(request(tenant, "send_email", EMAIL, approval_id=pending.approval_id), db=db)

    results = concurrently(3, follow_through)
    assert mails(db) == 1
    assert {r.status for r in results} == {"executed"}
    dumps = [r.model_dump_json() for r in results]
    assert len(set(dumps)) == 1, dumps  # all see the first result
    again = follow_through()
    assert again.status == "executed" and again.result == results[0].result
    assert mails(db) == 1


def test_an_approval_does_not_stretch_to_other_arguments_tenants_or_time(
    db: Database, tenant: NewTenant, other_tenant: NewTenant
) -> None:
    pending = execute(request(tenant, "send_email", EMAIL), db=db)
    assert pending.approval_id is not None
    approvals.decide(db, tenant.tenant_id, pending.approval_id, approve=True, by="owner")

    changed = dict(EMAIL, to="attacker@example.com")
    result = execute(request(tenant, "send_email", changed, approval_id=pending.approval_id), db=db)
    assert (result.status, result.error and result.error.code) == ("refused", "approval_mismatch")

    stolen = execute(
        request(other_tenant, "send_email", EMAIL, approval_id=pending.approval_id), db=db
    )
    assert (stolen.status, stolen.error and stolen.error.code) == ("refused", "approval_not_found")

    with db.connection() as conn:
        conn.execute("UPDATE agent_approvals SET expires_at = now() - interval '1 minute'")
    late = execute(request(tenant, "send_email", EMAIL, approval_id=pending.approval_id), db=db)
    assert (late.status, late.error and late.error.code) == ("refused", "approval_expired")
    assert mails(db) == 0


def test_a_pending_approval_expires_and_cannot_be_approved(db: Database, tenant: NewTenant) -> None:
    pending = execute(request(tenant, "send_email", EMAIL), db=db)
    assert pending.approval_id is not None
    with db.connection() as conn:
        conn.execute("UPDATE agent_approvals SET expires_at = now() - interval '1 minute'")
    from flowpilot.errors import Conflict

    with pytest.raises(Conflict) as raised:
        approvals.decide(db, tenant.tenant_id, pending.approval_id, approve=True, by="owner")
    assert raised.value.code == "approval_expired"
    listed = approvals.list_approvals(db, tenant.tenant_id)
    assert [a["status"] for a in listed] == ["expired"]


BLOCKED_PACK = """
pack: test
skills:
  - name: wipe_customers
    description: >-
      Delete every customer record. Use when: the owner asks to remove all customers.
      NOT for: removing one customer.
    handler: internal:memory_write
    side_effects: write
    trust_level: blocked
    parameters: {type: object, properties: {}, required: [], additionalProperties: false}
"""


def test_a_blocked_skill_is_refused_and_never_offered(db: Database, tenant: NewTenant) -> None:
    sync_packs(db, tenant.tenant_id, [parse_pack(BLOCKED_PACK)])
    result = execute(request(tenant, "wipe_customers", {}), db=db)
    assert (result.status, result.error and result.error.code) == ("refused", "skill_blocked")
    catalog = db.all(tenant.tenant_id, "skill_catalog")
    ranked = SkillIndex(SkillDoc.from_row(r) for r in catalog).rank("remove all customers")
    assert "wipe_customers" not in [s.name for s in ranked]


def test_one_idempotency_key_executes_once_even_concurrently(
    db: Database, tenant: NewTenant
) -> None:
    args = {"content": "Prefers morning visits", "category": "preference", "key": None,
            "importance": None, "expires_in_days": None}  # fmt: skip
    req = request(tenant, "memory_write", args, idempotency_key="note-42")
    first_two = concurrently(2, lambda: execute(req, db=db))
    rest = [execute(req, db=db) for _ in range(3)]
    responses = {r.model_dump_json() for r in [*first_two, *rest]}
    assert len(responses) == 1
    assert first_two[0].status == "executed"
    assert count(db, "SELECT count(*) AS n FROM agent_memory WHERE category = 'preference'") == 1
    assert count(db, "SELECT count(*) AS n FROM audit_log WHERE skill = 'memory_write'") == 1


def test_a_reused_idempotency_key_with_other_arguments_is_refused(
    db: Database, tenant: NewTenant
) -> None:
    base = {"category": "fact", "key": None, "importance": None, "expires_in_days": None}
    execute(request(tenant, "memory_write", {**base, "content": "a"}, idempotency_key="k"), db=db)
    other = execute(
        request(tenant, "memory_write", {**base, "content": "b"}, idempotency_key="k"), db=db
    )
    assert (other.status, other.error and other.error.code) == ("refused", "idempotency_key_reused")


def test_invalid_arguments_list_every_problem_and_run_nothing(
    db: Database, tenant: NewTenant
) -> None:
    result = execute(request(tenant, "send_email", {"to": 5, "surprise": True}), db=db)
    assert result.status == "invalid"
    assert result.error is not None and result.error.code == "invalid_arguments"
    problems = " ".join(p["problem"] for p in result.error.details)
    assert "subject" in problems and "body" in problems and "surprise" in problems
    assert len(result.error.details) >= 4
    assert count(db, "SELECT count(*) AS n FROM agent_approvals") == 0


def test_unknown_skill_is_refused_with_a_clear_code(db: Database, tenant: NewTenant) -> None:
    result = execute(request(tenant, "launch_rockets", {}), db=db)
    assert (result.status, result.error and result.error.code) == ("refused", "unknown_skill")


def test_the_request_cannot_carry_a_trust_level(db: Database, tenant: NewTenant) -> None:
    payload = request(tenant, "send_email", EMAIL).model_dump(mode="json")
    payload["trust_level"] = "auto"
    answer = handle_direct(payload)
    assert answer["status"] == "invalid"
    assert mails(db) == 0 and count(db, "SELECT count(*) AS n FROM agent_approvals") == 0


def test_tenant_policy_and_posture_adjust_trust(db: Database, tenant: NewTenant) -> None:
    db.one(tenant.tenant_id, "trust_policy_set", skill="send_email", category=None,
           actor_type="user", trust_level="auto")  # fmt: skip
    by_user = execute(request(tenant, "send_email", EMAIL), db=db)
    assert by_user.status == "executed" and by_user.trust_level == "auto"
    by_model = execute(request(tenant, "send_email", EMAIL, actor=MODEL), db=db)
    assert by_model.status == "pending_approval"  # the policy named the user only

    db.one(tenant.tenant_id, "tenant_set_autonomy", autonomy="cautious")
    note = {"content": "x", "category": "fact", "key": None, "importance": None,
            "expires_in_days": None}  # fmt: skip
    cautious = execute(request(tenant, "memory_write", note), db=db)
    assert cautious.status == "pending_approval"


def test_notify_runs_then_leaves_a_card_and_every_execution_is_audited(
    db: Database, tenant: NewTenant
) -> None:
    run_id = uuid.uuid4()
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO agent_runs (run_id, tenant_id, trigger) VALUES (%s, %s, 'chat')",
            (run_id, tenant.tenant_id),
        )
    goal = {"goal": "Replace the tyres on van 2", "priority": 60, "success_criteria": None,
            "kpis": None, "plan": None}  # fmt: skip
    result = execute(request(tenant, "objective_create", goal, run_id=run_id), db=db)
    assert result.status == "executed" and result.trust_level == "notify"
    assert count(db, "SELECT count(*) AS n FROM notifications") == 1
    execute(request(tenant, "launch_rockets", {}), db=db)
    with db.connection() as conn:
        audit = conn.execute(
            "SELECT skill, outcome, effective_trust, arguments_hash, run_id FROM audit_log"
            " ORDER BY audit_id"
        ).fetchall()
        card = conn.execute("SELECT title, body FROM notifications").fetchone()
        steps = conn.execute("SELECT count(*) AS n FROM agent_steps").fetchone()
    assert [(a["skill"], a["outcome"]) for a in audit] == [
        ("objective_create", "executed"), ("launch_rockets", "refused"),
    ]  # fmt: skip
    assert audit[0]["effective_trust"] == "notify" and audit[0]["arguments_hash"]
    assert audit[0]["run_id"] == run_id and audit[1]["run_id"] is None
    assert card["title"] == "FlowPilot ran objective_create"
    assert card["body"]["status"] == "executed" and card["body"]["result"]
    assert steps["n"] == 0  # the run's journal is the engine's to write


def test_only_the_record_of_a_write_waits_for_the_wal_flush(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[tuple[str, bool]] = []
    once = db._once

    def spy(tenant_id: Any, name: str, params: Any, durable: bool = True) -> Any:
        if name == "execution_record":
            flushed.append((params["skill"], durable))
        return once(tenant_id, name, params, durable)

    monkeypatch.setattr(db, "_once", spy)
    goal = {"goal": "Book the van's MOT", "priority": 40, "success_criteria": None,
            "kpis": None, "plan": None}  # fmt: skip
    assert execute(request(tenant, "get_briefing", {}), db=db).status == "executed"
    assert execute(request(tenant, "objective_create", goal), db=db).status == "executed"
    assert flushed == [("get_briefing", False), ("objective_create", True)]
    assert count(db, "SELECT count(*) AS n FROM audit_log") == 2


def test_a_handler_failure_is_reported_not_raised(db: Database, tenant: NewTenant) -> None:
    missing = {"objective_id": str(uuid.uuid4()), "step_index": None, "step_status": None,
               "note": None, "kpi_updates": None}  # fmt: skip
    result = execute(request(tenant, "objective_update_progress", missing), db=db)
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "objective_not_found"


def test_an_approval_is_used_once_even_if_trust_was_relaxed_meanwhile(
    db: Database, tenant: NewTenant
) -> None:
    pending = execute(request(tenant, "send_email", EMAIL), db=db)
    assert pending.approval_id is not None
    approvals.decide(db, tenant.tenant_id, pending.approval_id, approve=True, by="owner")
    db.one(tenant.tenant_id, "trust_policy_set", skill="send_email", category=None,
           actor_type=None, trust_level="auto")  # fmt: skip
    again = request(tenant, "send_email", EMAIL, approval_id=pending.approval_id)
    assert execute(again, db=db).status == "executed"
    assert execute(again, db=db).status == "executed"  # the stored result, not a second run
    assert mails(db) == 1
    statuses = [a["status"] for a in approvals.list_approvals(db, tenant.tenant_id)]
    assert statuses == ["executed"]


def test_an_approval_that_can_no_longer_run_is_used_up(db: Database, tenant: NewTenant) -> None:
    pending = execute(request(tenant, "send_email", EMAIL), db=db)
    assert pending.approval_id is not None
    approvals.decide(db, tenant.tenant_id, pending.approval_id, approve=True, by="owner")
    with db.connection() as conn:
        conn.execute("UPDATE agent_skills SET enabled = false WHERE name = 'send_email'")
    result = execute(request(tenant, "send_email", EMAIL, approval_id=pending.approval_id), db=db)
    assert result.error is not None and result.error.code == "skill_disabled"
    statuses = [a["status"] for a in approvals.list_approvals(db, tenant.tenant_id)]
    assert statuses == ["failed"] and mails(db) == 0
