"""The state critic: after each observation, continue, narrow, ask the user, or stop blocked,
and whether another try could change anything. Rules over the ledger: no model call."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from flowpilot.reasoning.ledger import Ledger, Observation

Decision = Literal["continue", "narrow", "ask_user", "stop_blocked"]
# Failures another attempt might fix (transient), by error code.
TRANSIENT = {"timeout", "unreachable", "statement_timeout", "rate_limited", "database_error"}


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    retry_useful: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _same_call(a: Observation, b: Observation) -> bool:
    return a.skill == b.skill and a.arguments == b.arguments


def assess(ledger: Ledger) -> Verdict:
    last = ledger.observations[-1]
    earlier = ledger.observations[:-1]
    code = (last.error or {}).get("code", "")
    if any(_same_call(last, prior) for prior in earlier):
        return Verdict(
            "stop_blocked", False, "the same call was repeated; another try changes nothing"
        )
    if last.status == "executed":
        return Verdict("continue", True, "evidence gathered")
    if last.status == "invalid":
        tries = sum(
            1 for o in ledger.observations if o.skill == last.skill and o.status == "invalid"
        )
        if tries >= 2:
            return Verdict("ask_user", False, "the details needed are missing; ask the person")
        return Verdict("narrow", True, "fix the arguments and try once more")
    if last.status == "refused":
        if code in {"skill_blocked", "skill_disabled", "not_offered"}:
            return Verdict(
                "narrow", False, "that action is not available; use another skill or answer"
            )
        return Verdict("stop_blocked", False, f"refused: {code}")
    if last.status == "failed":
        if code in TRANSIENT and sum(1 for o in earlier if o.skill == last.skill) == 0:
            return Verdict("narrow", True, "a transient failure; one more try may work")
        return Verdict("narrow", False, "that failed; answer with what is known")
    return Verdict("continue", True, last.status)


def guidance(verdict: Verdict) -> str:
    """A short note for the model after a non-trivial verdict."""
    return f"(Critic: {verdict.note}.)"
