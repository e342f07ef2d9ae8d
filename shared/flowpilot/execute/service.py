"""The execute pipeline: every skill execution, from every caller, passes through here.

load (one round trip) -> validate arguments -> effective trust -> blocked: refuse |
approve: ask (or follow an approval through, once) | auto/notify: run -> record (one round
trip: the audit row, and a notification card for notify). The calling run journals the act
as its own step.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from typing import Any

from flowpilot.config import get_settings
from flowpilot.db import Database, get_db
from flowpilot.errors import FlowPilotError
from flowpilot.execute import approvals
from flowpilot.execute.models import ExecuteError, ExecuteRequest, ExecuteResult, TrustLevel
from flowpilot.execute.trust import effective_trust
from flowpilot.observability import logger


def execute(request: ExecuteRequest, *, db: Database | None = None) -> ExecuteResult:
    """Execute one skill for the request's (authenticated) tenant and actor."""
    database = db or get_db()
    if request.idempotency_key is None:
        return _execute(request, database)
    from flowpilot.execute.idempotency import run_once

    def once(data: dict[str, Any]) -> dict[str, Any]:
        return _execute(ExecuteRequest.model_validate(data), database).model_dump(mode="json")

    try:
        stored = run_once(request.model_dump(mode="json"), once)
    except FlowPilotError as exc:
        return ExecuteResult.problem("refused", exc.code, exc.message)
    return ExecuteResult.model_validate(stored)


@lru_cache(maxsize=2048)
def _validator(version_hash: str, schema_json: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema_json))


def argument_problems(skill: dict[str, Any], arguments: dict[str, Any]) -> list[dict[str, str]]:
    """Every way ``arguments`` break the skill's JSON Schema (empty when they fit)."""
    schema_json = json.dumps(skill["parameters"], sort_keys=True)
    validator = _validator(skill["version_hash"], schema_json)
    return [
        {
            "field": ".".join(str(p) for p in error.absolute_path) or "(arguments)",
            "problem": error.message,
        }
        for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    ]


def _execute(request: ExecuteRequest, db: Database) -> ExecuteResult:
    started = time.perf_counter()
    tenant = request.tenant_id
    row = db.one(tenant, "skill_for_execution", name=request.skill, approval_id=request.approval_id)
    if row is None:
        return ExecuteResult.problem("refused", "unknown_tenant", "this tenant does not exist")
    outcome = _gate_and_run(request, row, db)
    _record(db, request, row, outcome, started)
    return outcome


# Why an approved operation can never run (as opposed to a wrong approval being presented).
UNRUNNABLE = {"unknown_skill", "skill_disabled", "skill_blocked", "invalid_arguments"}


def _gate_and_run(request: ExecuteRequest, row: dict[str, Any], db: Database) -> ExecuteResult:
    result = _gate(request, row, db)
    code = result.error.code if result.error else None
    if request.approval_id is not None and code in UNRUNNABLE:
        approval = row.get("approval") or {}
        if approval.get("status") == "approved":  # it can never run: use it up, visibly
            db.run(
                request.tenant_id,
                "approval_fail",
                approval_id=request.approval_id,
                result=result.model_dump(mode="json"),
            )
    return result


def _gate(request: ExecuteRequest, row: dict[str, Any], db: Database) -> ExecuteResult:
    if row["name"] is None:
        return ExecuteResult.problem(
            "refused", "unknown_skill", f"there is no skill named {request.skill!r}"
        )
    if not row["enabled"] or not row["module_enabled"]:
        return ExecuteResult.problem(
            "refused", "skill_disabled", f"skill {request.skill!r} is switched off"
        )
    problems = argument_problems(row, request.arguments)
    if problems:
        return ExecuteResult.problem(
            "invalid", "invalid_arguments", "the arguments do not fit the skill", problems
        )
    trust = effective_trust(
        skill=row["name"],
        level=row["trust_level"],
        side_effects=row["side_effects"],
        policies=row["policies"],
        autonomy=row["autonomy"],
        actor_type=request.actor.type,
    )
    if trust == "blocked":
        result = ExecuteResult.problem(
            "refused", "skill_blocked", f"skill {request.skill!r} is blocked"
        )
    elif trust == "approve" or request.approval_id is not None:
        # A follow-through always claims its approval, even if trust was relaxed meanwhile:
        # an approval is used once, whatever the level is now.
        result = _approve(request, row, db)
    else:
        result = _run(request, row, db)
    result.trust_level = trust
    return result


def _approve(request: ExecuteRequest, row: dict[str, Any], db: Database) -> ExecuteResult:
    digest = approvals.arguments_hash(request.skill, request.arguments)
    if request.approval_id is None:
        created = db.one(
            request.tenant_id,
            "approval_create",
            skill=request.skill,
            arguments=request.arguments,
            arguments_hash=digest,
            requested_by=request.actor.model_dump(),
            run_id=request.run_id,
            reason=None,
            ttl_hours=approvals.APPROVAL_TTL_HOURS,
        )
        assert created is not None
        return ExecuteResult(status="pending_approval", approval_id=created["approval_id"])
    approval = row["approval"]
    if approval is None:
        return ExecuteResult.problem("refused", "approval_not_found", "no such approval")
    if approval["skill"] != request.skill or approval["arguments_hash"] != digest:
        return ExecuteResult.problem(
            "refused",
            "approval_mismatch",
            "the approval was given for a different skill or different arguments",
        )
    claimed = db.one(
        request.tenant_id,
        "approval_claim",
        approval_id=request.approval_id,
        skill=request.skill,
        arguments_hash=digest,
    )
    if claimed is None:
        current = approvals.wait_for_result(db, request.tenant_id, request.approval_id)
        return _settled(current)
    outcome = _run(request, row, db)
    outcome.approval_id = request.approval_id
    outcome.trust_level = "approve"  # stored as is: later follow-throughs replay it
    db.run(
        request.tenant_id,
        "approval_finish",
        approval_id=request.approval_id,
        status="executed" if outcome.status == "executed" else "failed",
        result=outcome.model_dump(mode="json"),
    )
    return outcome


def _settled(approval: dict[str, Any]) -> ExecuteResult:
    """What a follow-through answers when it did not claim the approval itself."""
    status = approval["status"]
    if status in {"executed", "failed"} and approval["result"] is not None:
        # jsonb reorders keys; sort them back so a replay reads exactly like the first answer.
        return ExecuteResult.model_validate(
            json.loads(json.dumps(approval["result"], sort_keys=True))
        )
    if status == "pending":
        return ExecuteResult(status="pending_approval", approval_id=approval["approval_id"])
    if status == "approved":  # approved, but the claim failed: it expired meanwhile
        status = "expired"
    return ExecuteResult.problem(
        "refused", f"approval_{status}", f"this approval is {status} and cannot be executed"
    )


def _run(request: ExecuteRequest, row: dict[str, Any], db: Database) -> ExecuteResult:
    from flowpilot.skills.context import SkillContext
    from flowpilot.skills.handlers import run_handler

    ctx = SkillContext(
        db=db,
        settings=get_settings(),
        tenant_id=request.tenant_id,
        actor=request.actor,
        skill=row,
        run_id=request.run_id,
    )
    try:
        value = run_handler(ctx, request.arguments)
    except FlowPilotError as exc:
        return ExecuteResult(
            status="failed",
            error=ExecuteError(code=exc.code, message=exc.message, details=exc.details),
        )
    except Exception:
        logger.exception("skill crashed", skill=request.skill)
        return ExecuteResult.problem(
            "failed", "skill_crashed", f"skill {request.skill!r} failed unexpectedly"
        )
    # Sorted keys: a replayed (stored) result reads exactly like the first one.
    plain = json.loads(json.dumps(value, default=str, sort_keys=True))
    return ExecuteResult(status="executed", result=plain)


def _record(
    db: Database,
    request: ExecuteRequest,
    row: dict[str, Any],
    outcome: ExecuteResult,
    started: float,
) -> None:
    """The audit row and (for notify) a notification card: one round trip.

    The commit waits for the WAL flush unless the skill only reads: a read changed nothing in
    the world, so its record may ride on the next synchronous commit (within PostgreSQL's
    WAL writer delay at worst). Anything that writes, or is unknown, is flushed at once."""
    trust: TrustLevel | None = outcome.trust_level
    notify = trust == "notify" and outcome.status == "executed"
    try:
        db.one(
            request.tenant_id,
            "execution_record",
            durable=row.get("side_effects") != "read",
            actor_type=request.actor.type,
            actor_id=request.actor.id,
            skill=request.skill,
            arguments_hash=approvals.arguments_hash(request.skill, request.arguments),
            trust=trust,
            outcome=outcome.status,
            duration_ms=int((time.perf_counter() - started) * 1000),
            error=outcome.error.model_dump() if outcome.error else None,
            run_id=request.run_id,
            notify_title=f"FlowPilot ran {request.skill}" if notify else None,
            notify_body={"status": outcome.status, "result": outcome.result} if notify else None,
        )
    except FlowPilotError:
        # The execution happened; losing its audit row must not turn it into a failure.
        logger.exception("could not record an execution", skill=request.skill)
