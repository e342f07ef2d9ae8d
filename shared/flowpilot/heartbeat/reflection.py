"""Reflection: the mandatory critique after a write skill, and what it does to the objective.

Rules over what the run observed, no model call: the outcome (success, partial, no_effect,
negative), a plain critique, a lesson remembered for later bootstraps, and the objective's
progress (its current plan step done, KPIs tied to the skill counted, completion when every
step is done).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from flowpilot.reasoning.ledger import humanize


@dataclass
class Reflection:
    skill: str
    outcome: str | None  # success | partial | no_effect | negative; None: progress only
    critique: str | None
    lesson: str | None
    lesson_key: str | None
    progress: dict[str, Any] | None = None
    kpis: list[dict[str, Any]] | None = None
    objective_status: str | None = None
    notes: list[str] = field(default_factory=list)


def _outcome(observation: dict[str, Any]) -> str:
    status = observation["status"]
    if status == "executed":
        return "success" if observation.get("claims") else "no_effect"
    if status == "pending_approval":
        return "partial"
    if status in ("invalid", "refused"):
        return "no_effect"
    return "negative"


def reflect(
    observation: dict[str, Any], objective: dict[str, Any] | None, *, now: dt.datetime | None = None
) -> Reflection:
    """Reflect on one write-skill observation, for the objective it served (if any)."""
    skill = observation["skill"]
    action = humanize(skill)
    outcome = _outcome(observation)
    if outcome == "success":
        critique = f"{action.capitalize()} worked: {observation['claims'][0]}"
        lesson = f"{action.capitalize()} works for this kind of step"
    elif outcome == "negative":
        reason = (observation.get("error") or {}).get("message") or "it failed"
        critique = f"{action.capitalize()} failed: {reason}"
        lesson = f"{action.capitalize()} failed ({reason}); check its inputs before trying again"
    elif outcome == "partial":
        critique = f"{action.capitalize()} is waiting for a person's approval"
        lesson = f"{action.capitalize()} needs approval; plan for the wait"
    else:
        reason = (observation.get("gaps") or ["it changed nothing"])[0]
        critique = f"{action.capitalize()} had no effect: {reason}"
        lesson = f"{action.capitalize()} did not help here ({reason})"
    objective_ref = str(objective["objective_id"]) if objective else "general"
    reflection = Reflection(
        skill=skill,
        outcome=outcome,
        critique=critique[:1000],
        lesson=lesson[:500],
        lesson_key=f"{skill}:{objective_ref}",
    )
    if objective is not None and outcome == "success":
        _advance(reflection, objective, observation, now or dt.datetime.now(dt.UTC))
    return reflection


def progress_only(
    observation: dict[str, Any], objective: dict[str, Any], *, now: dt.datetime | None = None
) -> Reflection:
    """A read skill that did its step moves the plan on; no critique is owed for a read."""
    step = Reflection(
        skill=observation["skill"], outcome=None, critique=None, lesson=None, lesson_key=None
    )
    _advance(step, objective, observation, now or dt.datetime.now(dt.UTC))
    return step


def _advance(
    reflection: Reflection, objective: dict[str, Any], observation: dict[str, Any], now: dt.datetime
) -> None:
    progress = dict(objective.get("progress") or {})
    plan = [dict(step) for step in progress.get("plan") or []]
    cursor = next(
        (i for i, s in enumerate(plan) if s.get("status") not in ("done", "skipped")), None
    )
    if cursor is not None:
        plan[cursor]["status"] = "done"
        plan[cursor]["done_at"] = now.isoformat()
    remaining = next(
        (i for i, s in enumerate(plan) if s.get("status") not in ("done", "skipped")), len(plan)
    )
    notes = list(progress.get("notes") or [])
    action = humanize(observation["skill"]).capitalize()
    claim = (observation.get("claims") or ["done"])[0]
    notes.append(
        {"at": now.isoformat(), "note": (reflection.critique or f"{action}: {claim}")[:300]}
    )
    reflection.progress = {**progress, "plan": plan, "cursor": remaining, "notes": notes[-20:]}
    kpis = [dict(k) for k in objective.get("kpis") or []]
    for kpi in kpis:
        if kpi.get("skill") == observation["skill"]:
            kpi["current"] = (kpi.get("current") or 0) + 1
    reflection.kpis = kpis
    if (plan and remaining == len(plan)) or _kpis_met(kpis):
        reflection.objective_status = "completed"
        if reflection.critique:
            reflection.critique += ". The objective's success criteria are met."


def _kpis_met(kpis: list[dict[str, Any]]) -> bool:
    targets = [k for k in kpis if isinstance(k.get("target"), int | float)]
    return bool(targets) and all((k.get("current") or 0) >= k["target"] for k in targets)
