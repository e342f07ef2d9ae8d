"""The shapes every model client speaks, whatever answers: a provider or the heuristic."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

Provider = Literal["openai", "heuristic"]
FunctionName = Literal[
    "chat", "heartbeat", "signal_planner", "critic", "reflect", "workflow_branch"
]
FUNCTIONS: tuple[FunctionName, ...] = (
    "chat",
    "heartbeat",
    "signal_planner",
    "critic",
    "reflect",
    "workflow_branch",
)


@dataclass(frozen=True)
class AIConfig:
    """Which model answers for one function of one tenant, and where that rule came from."""

    function: FunctionName
    provider: Provider
    model: str
    tier: str = "standard"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    source: str = "settings"  # "settings" | "route" | "offline"
    # Read from Secrets Manager only when a model is actually called (see routing.api_key).
    api_key_secret_arn: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class ModelReply:
    content: str | None
    tool_calls: list[ToolCall]
    usage: Usage
    provider: str
    model: str
    duration_ms: int = 0
    parsed: Any = None  # the validated structured output, when a response model was given
    attempts: int = 1


class TokenBudget(Protocol):
    def check(self, estimated_tokens: int) -> None:
        """Raise BudgetExceeded before a call that the budget cannot afford."""

    def spend(self, usage: Usage) -> None: ...


class ModelClient(Protocol):
    config: AIConfig

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_model: type[BaseModel] | None = None,
        budget: TokenBudget | None = None,
    ) -> ModelReply:
        """One model turn: either tool calls, or content (validated when response_model given).

        Raises ModelTimeout, ModelError (code ``invalid_output`` after one repair attempt,
        ``provider_error`` after retries) or BudgetExceeded.
        """
