"""The answer runtime: the final answer's shape, built from claims, through a quality gate.

The gate repairs rather than rejects: it never lets an empty answer, an internal id or a
status label reach a customer, makes the answer lead with its claim, and makes it say what
could not be established.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from flowpilot.reasoning.ledger import UUID_RE, Ledger

STATUS_WORDS = {
    "pending_approval": "waiting for approval",
    "waiting_approval": "waiting for approval",
    "executed": "done",
    "refused": "not allowed",
    "invalid_arguments": "incomplete details",
    "skill_blocked": "not allowed",
    "unknown_skill": "not available",
}
_STATUS_RE = re.compile(r"\b(" + "|".join(map(re.escape, STATUS_WORDS)) + r")\b")
_LABEL_RE = re.compile(r"\b(?:status|run_id|step_id|approval_id|tenant_id)\s*[:=]\s*\S+", re.I)
_FILLER_RE = re.compile(
    r"^(?:(?:sure|certainly|of course|okay|ok|great|absolutely)[,!.]?\s+|"
    r"(?:as an ai[^,.]*[,.]\s*)|(?:here(?:'s| is) (?:what|the answer)[^:]*:\s*)|"
    r"(?:i (?:will|'ll) (?:now )?(?:look|check)[^.]*\.\s*))+",
    re.I,
)
EMPTY_FALLBACK = "I could not find anything to answer that with."


class FinalAnswer(BaseModel):
    """What the model returns when it is done (structured output)."""

    answer: str = Field(description="The reply to the person, leading with the main finding.")
    main_claim: str = Field(description="The single most important finding, one sentence.")
    limitations: list[str] = Field(description="What could not be established, if anything.")


def from_claims(ledger: Ledger) -> str:
    """An answer composed from the ledger alone (when no model answer is available)."""
    claims = ledger.claims
    boundaries = ledger.boundaries
    if not claims and not boundaries:
        return EMPTY_FALLBACK
    parts = [_sentence(c) for c in claims[:6]] + [_sentence(b) for b in boundaries[:3]]
    return " ".join(parts)


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def quality_gate(text: str | None, ledger: Ledger, limitations: list[str] | None = None) -> str:
    """Repair an answer so it is fit for a customer."""
    answer = (text or "").strip()
    answer = _LABEL_RE.sub("", answer)
    answer = UUID_RE.sub("", answer)
    answer = _STATUS_RE.sub(lambda m: STATUS_WORDS[m.group(1)], answer)
    answer = _FILLER_RE.sub("", answer).strip()
    answer = re.sub(r"\(\s*\)|\[\s*\]", "", answer)
    answer = re.sub(r"[ \t]{2,}", " ", answer).strip()
    if not answer:
        answer = from_claims(ledger)
    answer = answer[0].upper() + answer[1:] if answer else EMPTY_FALLBACK
    missing = [
        gap
        for gap in [*ledger.gaps, *(limitations or [])]
        if gap.strip() and gap.lower()[:40] not in answer.lower()
    ]
    if missing:
        unique = list(dict.fromkeys(_sentence(UUID_RE.sub("", g)) for g in missing))
        answer += "\n\nWhat I could not establish: " + " ".join(unique[:4])
    return answer
