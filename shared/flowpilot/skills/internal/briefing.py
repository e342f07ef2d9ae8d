"""``get_briefing``: what needs attention, in numbers and in a few plain sentences."""

from __future__ import annotations

import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.skills.context import SkillContext
from flowpilot.skills.handlers.internal import internal


def build_briefing(db: Database, tenant_id: uuid.UUID) -> dict[str, Any]:
    """Approvals, objectives, events, failures, signals, tokens and flagged skills (one trip)."""
    row = db.one(tenant_id, "briefing_snapshot")
    assert row is not None
    briefing: dict[str, Any] = row["briefing"]
    tokens = briefing["tokens"]
    budget = tokens.get("budget") or 0
    tokens["percent_of_budget"] = round(100 * tokens["today"] / budget, 1) if budget else None
    briefing["summary"] = summarize(briefing)
    return briefing


def summarize(briefing: dict[str, Any]) -> str:
    """Two to four sentences a business owner can read at a glance."""
    sentences = [_attention(briefing), _objectives(briefing)]
    flagged = briefing["flagged_skills"]
    if flagged:
        names = _join([_humane(f["skill"]) for f in flagged[:3]])
        one = len(flagged) == 1
        sentences.append(
            f"The {names} skill{'' if one else 's'} keep{'s' if one else ''} missing the mark "
            "this week and may need a closer look."
        )
    sentences.append(_tokens(briefing["tokens"]))
    return " ".join(sentences)


def _attention(briefing: dict[str, Any]) -> str:
    approvals = briefing["approvals"]["pending"]
    failures = briefing["failures"]["count"]
    signals = briefing["signals_waiting"]
    parts = []
    if approvals:
        skills = _join(sorted({_humane(a["skill"]) for a in briefing["approvals"]["top"]}))
        parts.append(f"{_count(approvals, 'approval')} waiting for your decision ({skills})")
    if failures:
        parts.append(f"{_count(failures, 'failed action')} in the last 24 hours")
    if signals:
        parts.append(f"{_count(signals, 'incoming request')} still being worked on")
    if not parts:
        return "Nothing needs your attention right now."
    return f"You have {_join(parts)}."


def _objectives(briefing: dict[str, Any]) -> str:
    objectives = briefing["objectives"]
    if not objectives:
        return "There are no open objectives."
    top = objectives[0]
    total = top["steps_total"]
    progress = f", {top['steps_done']} of {total} steps done" if total else ""
    others = len(objectives) - 1
    tail = f" (plus {_count(others, 'other open objective')})" if others else ""
    return f"The top objective is \u201c{_clip(top['goal'])}\u201d{progress}{tail}."


def _tokens(tokens: dict[str, Any]) -> str:
    today, budget = tokens["today"], tokens.get("budget") or 0
    if not budget:
        return f"The agent used {today:,} tokens today, with no daily budget set."
    percent = tokens["percent_of_budget"]
    if today >= budget:
        return (
            f"The agent has used its whole daily budget ({today:,} of {budget:,} tokens) "
            "and will pause until tomorrow."
        )
    return f"The agent used {today:,} of its {budget:,} daily tokens ({percent:g}%)."


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _humane(skill: str) -> str:
    """A skill's name as words: ``send_email`` reads as "send email"."""
    return skill.replace("_", " ")


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


@internal("get_briefing")
def get_briefing(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return build_briefing(ctx.db, ctx.tenant_id)
