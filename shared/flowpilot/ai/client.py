"""The one way to get a model client for a resolved AIConfig."""

from __future__ import annotations

from flowpilot.ai.types import AIConfig, ModelClient
from flowpilot.config import Settings, get_settings


def model_client(
    config: AIConfig,
    *,
    settings: Settings | None = None,
    timeout_s: float | None = None,
    max_retries: int = 2,
) -> ModelClient:
    """The offline heuristic reasoner, or the OpenAI-compatible client (``openai`` itself is
    imported only when that client makes its first call).

    ``timeout_s`` bounds one complete() call, retries included; it defaults to
    FLOWPILOT_MODEL_TIMEOUT (the signal planner passes its own hard limit).
    """
    if config.provider == "heuristic":
        from flowpilot.ai.heuristic import HeuristicModelClient

        return HeuristicModelClient(config)
    from flowpilot.ai.openai_client import OpenAIModelClient

    settings = settings or get_settings()
    return OpenAIModelClient(
        config,
        timeout_s=settings.model_timeout_s if timeout_s is None else timeout_s,
        max_retries=max_retries,
    )
