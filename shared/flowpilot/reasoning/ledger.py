"""The observation ledger and its evidence normalizer.

Every tool result is recorded as an observation, then normalized into claims (what we now
know), boundaries (limits on what we know) and gaps (what we could not establish). Raw tool
payloads never become the answer: the answer is built from claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

UUID_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_TEXT_KEYS = ("summary", "content", "title", "goal", "name", "subject", "text", "message")
_SKIP_KEYS = {"created_at", "updated_at", "expires_at", "score", "version_hash"}
MAX_CLAIMS_PER_OBSERVATION = 6


def humanize(skill: str) -> str:
    return skill.replace("_", " ")


@dataclass
class Observation:
    skill: str
    arguments: dict[str, Any]
    status: str
    result: Any = None
    error: dict[str, Any] | None = None
    claims: list[str] = field(default_factory=list)
    boundaries: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Its fields, shallow: callers serialize it (a deep copy of the result is waste)."""
        return dict(vars(self))


@dataclass
class Ledger:
    observations: list[Observation] = field(default_factory=list)

    def record(self, observation: Observation) -> Observation:
        normalize(observation)
        self.observations.append(observation)
        return observation

    @property
    def claims(self) -> list[str]:
        return [c for o in self.observations for c in o.claims]

    @property
    def boundaries(self) -> list[str]:
        return [b for o in self.observations for b in o.boundaries]

    @property
    def gaps(self) -> list[str]:
        return [g for o in self.observations for g in o.gaps]

    def to_list(self, *, with_results: bool = True) -> list[dict[str, Any]]:
        """The observations; without their raw results, what is kept of a run (the act steps
        hold those): the evidence the run answered from, and enough to resume it."""
        if with_results:
            return [o.to_dict() for o in self.observations]
        return [
            {key: value for key, value in o.to_dict().items() if key != "result"}
            for o in self.observations
        ]

    @classmethod
    def from_list(cls, items: list[dict[str, Any]]) -> Ledger:
        return cls([Observation(**item) for item in items])


def clean_text(text: str, limit: int = 240) -> str:
    """One line of plain text: ids removed, whitespace folded, cut at ``limit``."""
    text = UUID_RE.sub("", " ".join(str(text).split())).strip(" ,;:")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _item_text(item: Any) -> str | None:
    if isinstance(item, str):
        return clean_text(item)
    if isinstance(item, dict):
        for key in _TEXT_KEYS:
            if isinstance(item.get(key), str) and item[key].strip():
                return clean_text(item[key])
    return None


def _claims_from(result: Any, skill: str) -> tuple[list[str], list[str]]:
    claims: list[str] = []
    boundaries: list[str] = []
    if isinstance(result, dict):
        if isinstance(result.get("summary"), str) and result["summary"].strip():
            # A skill that summarises itself has said it best: its summary is the claim.
            if result.get("truncated") is True:
                boundaries.append(f"{humanize(skill)} returned only part of the matching rows")
            return [clean_text(result["summary"], 600)], boundaries
        for key, value in result.items():
            if key in _SKIP_KEYS or key == "summary" or key.endswith("_id"):
                continue
            if key == "truncated" and value is True:
                boundaries.append(f"{humanize(skill)} returned only part of the matching rows")
            elif isinstance(value, list):
                texts = [t for t in (_item_text(v) for v in value) if t]
                noun = humanize(key)
                if not value:
                    claims.append(f"{humanize(skill)} found no {noun}")
                elif texts:
                    shown = "; ".join(texts[:3])
                    more = f" (and {len(value) - 3} more)" if len(value) > 3 else ""
                    claims.append(f"{noun}: {shown}{more}")
                else:
                    claims.append(f"{len(value)} {noun}")
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                if not result.get("summary") and len(claims) < 3:
                    claims.append(f"{humanize(key)}: {clean_text(str(value), 120)}")
    elif isinstance(result, list):
        texts = [t for t in (_item_text(v) for v in result) if t]
        claims.append("; ".join(texts[:3]) if texts else f"{len(result)} items")
    elif result is not None:
        claims.append(clean_text(str(result)))
    if not claims:
        claims.append(f"{humanize(skill)} completed")
    return claims[:MAX_CLAIMS_PER_OBSERVATION], boundaries


def normalize(observation: Observation) -> None:
    """Fill the observation's claims, boundaries and gaps from its status and result."""
    action = humanize(observation.skill)
    message = clean_text((observation.error or {}).get("message", ""), 200)
    if observation.status == "executed":
        observation.claims, observation.boundaries = _claims_from(
            observation.result, observation.skill
        )
    elif observation.status == "pending_approval":
        observation.boundaries = [f"{action} is waiting for your approval"]
    elif observation.status == "invalid":
        observation.gaps = [f"I could not {action}: the request was incomplete ({message})"]
    elif observation.status == "refused":
        observation.gaps = [f"I am not allowed to {action} here ({message})"]
    else:
        observation.gaps = [f"I could not {action}: {message or 'it failed'}"]
