"""``/skills``: the tenant's registered skills and what the linter says of them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from flowpilot.api.deps import DB, Caller

router = APIRouter(tags=["skills"])


class SkillSummary(BaseModel):
    name: str
    description: str
    handler: str
    category: str
    side_effects: str
    trust_level: str
    mcp_exposed: bool
    groups: list[str]
    module: str
    enabled: bool
    module_enabled: bool
    version_hash: str


class LintFinding(BaseModel):
    skill: str
    rule: str
    message: str


class LintReport(BaseModel):
    clean: bool
    findings: list[LintFinding]


@router.get("/skills", response_model=list[SkillSummary])
def list_skills(caller: Caller, db: DB) -> list[dict[str, Any]]:
    from flowpilot.skills.registry import list_skills

    return list_skills(db, caller.tenant_id)


@router.get("/skills/lint", response_model=LintReport)
def lint_skills(caller: Caller, db: DB) -> LintReport:
    from flowpilot.skills.linter import lint_rows

    rows = db.all(caller.tenant_id, "skill_rows_for_lint")
    findings = [LintFinding(skill=f.skill, rule=f.rule, message=f.message) for f in lint_rows(rows)]
    return LintReport(clean=not findings, findings=findings)
