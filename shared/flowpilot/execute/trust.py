"""Effective trust: the skill's level, adjusted by tenant policy and autonomy posture.

Inputs come only from the registry row and the tenant's own settings. Nothing a caller or a
model sends can raise a level: the request has no trust field at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flowpilot.execute.models import TrustLevel

ORDER: tuple[TrustLevel, ...] = ("auto", "notify", "approve", "blocked")


def stricter(a: TrustLevel, b: TrustLevel) -> TrustLevel:
    return a if ORDER.index(a) >= ORDER.index(b) else b


def _policy_rank(policy: Mapping[str, Any], skill: str, actor_type: str) -> int | None:
    """How specific a policy is for this call (higher wins), or None when it does not apply."""
    if policy.get("actor_type") not in (None, actor_type):
        return None
    by_actor = policy.get("actor_type") is not None
    if policy.get("skill") == skill:
        return 4 if by_actor else 3
    if policy.get("skill") is None and policy.get("category") is not None:
        return 2 if by_actor else 1
    return None


def effective_trust(
    *,
    skill: str,
    level: TrustLevel,
    side_effects: str,
    policies: Sequence[Mapping[str, Any]],
    autonomy: str,
    actor_type: str,
) -> TrustLevel:
    """The level an execution runs at.

    The most specific tenant policy replaces the skill's level (a tenant may relax or
    tighten its own skills). The autonomy posture then adjusts writes: ``cautious`` asks
    for approval of every write; ``autonomous`` lets ``notify`` writes run as ``auto``.
    A ``blocked`` level stays blocked whatever else applies.
    """
    ranked = [
        (rank, policy)
        for policy in policies
        if (rank := _policy_rank(policy, skill, actor_type)) is not None
    ]
    chosen: TrustLevel = level
    if ranked:
        best = max(rank for rank, _ in ranked)
        candidates: list[TrustLevel] = [p["trust_level"] for rank, p in ranked if rank == best]
        # Equally specific policies: the strictest one wins.
        chosen = max(candidates, key=ORDER.index)
    if level == "blocked":
        return "blocked"
    if side_effects == "write":
        if autonomy == "cautious":
            return stricter(chosen, "approve")
        if autonomy == "autonomous" and chosen == "notify":
            return "auto"
    return chosen
