"""Tokens and money: a run's budget, what a tenant has left today, what a call cost."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from uuid import UUID

from flowpilot.ai.types import Usage
from flowpilot.errors import BudgetExceeded

if TYPE_CHECKING:
    from flowpilot.db import Database

# US dollars per one million tokens: (input, output). Unknown models cost 0.0 (not guessed).
PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gemini-2.0-flash": (0.10, 0.40),
}


def estimate_tokens(*parts: Any) -> int:
    """About a token per four characters of the JSON a request would carry."""
    chars = 0
    for part in parts:
        if part is None:
            continue
        chars += len(part) if isinstance(part, str | bytes) else len(json.dumps(part, default=str))
    return (chars + 3) // 4


def estimate_cost_usd(model: str, usage: Usage) -> float:
    """The price of ``usage`` on ``model``; dated variants (gpt-4o-mini-2024-07-18) match."""
    name = model.strip().lower().removeprefix("models/")
    matches = [key for key in PRICES_PER_MILLION if name == key or name.startswith(key + "-")]
    if not matches:
        return 0.0
    price_in, price_out = PRICES_PER_MILLION[max(matches, key=len)]
    cost = (usage.prompt_tokens * price_in + usage.completion_tokens * price_out) / 1_000_000
    return round(cost, 6)


def tenant_token_usage(db: Database, tenant_id: UUID) -> tuple[int, int]:
    """Tokens the tenant's runs used since midnight, and its daily budget (one query)."""
    row = db.one(tenant_id, "accounting_tokens_today")
    if row is None:
        return 0, 0
    return int(row["used"]), int(row["budget"])


def tenant_tokens_remaining(db: Database, tenant_id: UUID) -> int:
    """The daily token budget minus what the tenant's runs used today (never below zero)."""
    used, budget = tenant_token_usage(db, tenant_id)
    return max(0, budget - used)


class RunBudget:
    """A TokenBudget for one run: its own limit, and what is left of the tenant's day."""

    def __init__(
        self,
        run_token_limit: int,
        tenant_tokens_remaining: int | None,
        *,
        daily_token_budget: int | None = None,
    ) -> None:
        self.run_token_limit = run_token_limit
        self.tenant_tokens_remaining = tenant_tokens_remaining
        self.daily_token_budget = daily_token_budget
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.calls = 0

    @classmethod
    def for_tenant(cls, db: Database, tenant_id: UUID, run_token_limit: int) -> RunBudget:
        used, budget = tenant_token_usage(db, tenant_id)
        return cls(run_token_limit, max(0, budget - used), daily_token_budget=budget)

    @property
    def spent(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def check(self, estimated_tokens: int) -> None:
        needed = self.spent + max(0, estimated_tokens)
        remaining = self.tenant_tokens_remaining
        if remaining is not None and needed > remaining:
            raise BudgetExceeded(
                self._daily_message(remaining),
                code="daily_budget_exceeded",
                details={"needed": needed, "remaining": remaining},
            )
        if needed > self.run_token_limit:
            raise BudgetExceeded(
                "This task has used its token budget "
                f"({self.spent:,} of {self.run_token_limit:,} tokens).",
                code="run_budget_exceeded",
                details={"spent": self.spent, "limit": self.run_token_limit, "needed": needed},
            )

    def spend(self, usage: Usage) -> None:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.calls += 1

    def _daily_message(self, remaining: int) -> str:
        budget = self.daily_token_budget
        if budget is None:
            return (
                "Today's token budget for this workspace is spent "
                f"({max(0, remaining - self.spent):,} tokens left)."
            )
        used = min(budget, budget - remaining + self.spent)
        return f"Today's token budget for this workspace is spent ({used:,} of {budget:,})."
