"""Which model answers each function of a tenant: the settings by default, a tenant's route on top.

Without credentials every function falls back to the offline heuristic reasoner (law 4), and a
route can never crash a run: a route to a provider that has no credentials answers offline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID

from flowpilot.ai.types import FUNCTIONS, AIConfig, FunctionName, Provider
from flowpilot.config import Settings, get_settings
from flowpilot.errors import DatabaseError, InvalidRequest, ModelError

if TYPE_CHECKING:
    from flowpilot.db import Database

HEURISTIC_MODEL = "heuristic-v1"
PROVIDERS: tuple[Provider, ...] = ("openai", "heuristic")
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"

DEFAULT_TIERS: dict[FunctionName, str] = {
    "heartbeat": "cheap",
    "critic": "cheap",
    "reflect": "cheap",
    "workflow_branch": "cheap",
    "chat": "standard",
    "signal_planner": "standard",
}
# The settings field naming each tier's model. Every tier uses FLOWPILOT_MODEL today; a future
# FLOWPILOT_MODEL_CHEAP plugs in as {"cheap": "model_cheap"} once Settings has that field.
TIER_MODEL_SETTING: dict[str, str] = {"cheap": "model", "standard": "model"}

# The agent_runs.trigger of the runs a function drives; the other functions are found by the
# run's state->>'ai_function'.
RUN_TRIGGER: dict[FunctionName, str] = {
    "chat": "chat",
    "heartbeat": "heartbeat",
    "signal_planner": "signal",
}

_SECRET_KEY_FIELDS = ("OPENAI_API_KEY", "openai_api_key", "api_key", "apiKey", "key")


def resolve_ai_config(
    function: FunctionName,
    *,
    tenant_id: UUID | None = None,
    db: Database | None = None,
    settings: Settings | None = None,
) -> AIConfig:
    """The model for ``function``: the tenant's active route if it has one, else the settings."""
    name = _function(function)
    settings = settings or get_settings()
    route = None
    if tenant_id is not None:
        if db is None:
            from flowpilot.db import get_db

            db = get_db()
        route = db.one(tenant_id, "model_route_active", function_name=name)
    return config_for(name, route, settings)


def config_for(
    function: FunctionName, route: Mapping[str, Any] | None, settings: Settings
) -> AIConfig:
    """The config one route row (or none) gives under these settings; no I/O."""
    if route is None:
        return _default(function, settings)
    tier = str(route.get("tier") or DEFAULT_TIERS[function])
    provider = route.get("provider")
    if provider == "heuristic":
        model = str(route.get("model") or HEURISTIC_MODEL)
        return AIConfig(function, "heuristic", model, tier=tier, source="route")
    base_url = route.get("base_url") or None
    usable = settings.model_configured or base_url is not None
    if provider != "openai" or settings.model_provider == "heuristic" or not usable:
        return _offline(function, tier)
    # The platform's key goes only to the platform's own endpoint: a route pointing at another
    # server (a local one, or one a tenant chose) is sent no key, so it cannot harvest it.
    own_endpoint = base_url is None or _same_endpoint(base_url, settings.openai_base_url)
    return AIConfig(
        function,
        "openai",
        str(route.get("model") or tier_model(settings, tier)),
        tier=tier,
        base_url=base_url or settings.openai_base_url,
        api_key=settings.openai_api_key if own_endpoint else None,
        api_key_secret_arn=settings.openai_api_key_secret_arn if own_endpoint else None,
        source="route",
    )


def tier_model(settings: Settings, tier: str) -> str:
    value = getattr(settings, TIER_MODEL_SETTING.get(tier, "model"), None)
    return value if isinstance(value, str) and value else settings.model


def api_key(config: AIConfig) -> str | None:
    """The config's API key, read from Secrets Manager on first need (cached per container)."""
    if config.api_key:
        return config.api_key
    if config.api_key_secret_arn:
        return _secret_api_key(config.api_key_secret_arn)
    return None


def route_details(
    db: Database, tenant_id: UUID, function: FunctionName, *, settings: Settings | None = None
) -> dict[str, Any]:
    """What answers ``function`` for the tenant, its route history and its recent runs (no key)."""
    name = _function(function)
    row = db.one(
        tenant_id, "model_route_details", function_name=name, trigger=RUN_TRIGGER.get(name)
    )
    overrides: list[dict[str, Any]] = list(row["overrides"]) if row else []
    runs: list[dict[str, Any]] = list(row["recent_executions"]) if row else []
    for run in runs:
        if run.get("cost_usd") is not None:
            run["cost_usd"] = float(run["cost_usd"])
    active = next((o for o in overrides if o.get("active")), None)
    config = config_for(name, active, settings or get_settings())
    return {
        "function": name,
        "provider": config.provider,
        "model": config.model,
        "tier": config.tier,
        "source": config.source,
        "base_url": _display_url(config.base_url),
        "recent_executions": runs,
        "overrides": overrides,
    }


def set_route(
    db: Database,
    tenant_id: UUID,
    function: FunctionName,
    provider: str,
    model: str | None,
    tier: str | None,
    base_url: str | None,
    changed_by: str | None,
) -> dict[str, Any]:
    """Make a new route the active one for ``function``; the old one stays in the history."""
    name = _function(function)
    if provider not in PROVIDERS:
        raise InvalidRequest(
            f"provider must be one of {', '.join(PROVIDERS)}, not {provider!r}",
            code="invalid_route",
        )
    params = {
        "function_name": name,
        "provider": provider,
        "model": _model_name(provider, model),
        "tier": _short((tier or "").strip() or DEFAULT_TIERS[name], 50, "tier"),
        "base_url": _base_url(base_url) if provider == "openai" else None,
        "changed_by": (changed_by or "").strip()[:200] or None,
    }
    # Two changes racing: the loser's insert meets the winner's new active row (unique index);
    # a second attempt sees that row committed and deactivates it, so the last change wins.
    for attempt in range(2):
        try:
            with db.transaction(tenant_id) as tx:
                tx.run("model_route_deactivate", function_name=name)
                row = tx.one("model_route_insert", **params)
        except DatabaseError as exc:
            if exc.code != "conflict" or attempt:
                raise
            continue
        return dict(row or {})
    raise AssertionError("unreachable")  # pragma: no cover


def _default(function: FunctionName, settings: Settings) -> AIConfig:
    tier = DEFAULT_TIERS[function]
    if not settings.model_configured:
        return _offline(function, tier)
    return AIConfig(
        function,
        "openai",
        tier_model(settings, tier),
        tier=tier,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key,
        api_key_secret_arn=settings.openai_api_key_secret_arn,
        source="settings",
    )


def _offline(function: FunctionName, tier: str) -> AIConfig:
    return AIConfig(function, "heuristic", HEURISTIC_MODEL, tier=tier, source="offline")


def _function(name: str) -> FunctionName:
    if name not in FUNCTIONS:
        raise InvalidRequest(
            f"there is no AI function named {name!r}; choose one of {', '.join(FUNCTIONS)}",
            code="unknown_function",
        )
    return name


def _model_name(provider: str, model: str | None) -> str:
    name = (model or "").strip()
    if not name:
        if provider == "heuristic":
            return HEURISTIC_MODEL
        raise InvalidRequest("a route to a model provider needs a model name", code="invalid_route")
    return _short(name, 200, "model")


def _short(value: str, limit: int, what: str) -> str:
    if len(value) > limit:
        raise InvalidRequest(f"the {what} is longer than {limit} characters", code="invalid_route")
    return value


def _base_url(value: str | None) -> str | None:
    url = (value or "").strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in url or len(url) > 500:
        raise InvalidRequest(
            "base_url must be an http(s) URL such as http://localhost:11434/v1",
            code="invalid_route",
        )
    return url.rstrip("/")


def _same_endpoint(a: str, b: str | None) -> bool:
    def norm(url: str) -> tuple[str, str, str]:
        parts = urlsplit(url.strip())
        return parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/")

    return norm(a) == norm(b or OPENAI_DEFAULT_BASE_URL)


def _display_url(url: str | None) -> str | None:
    """The URL without any user:password part, so details never show a credential."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@cache
def _secret_api_key(arn: str) -> str:
    # boto3 and Powertools' parameters load only here, on the first model call of a container.
    try:
        from aws_lambda_powertools.utilities import parameters

        raw = parameters.get_secret(arn)
    except Exception as exc:
        raise ModelError(
            "The model provider's API key could not be read from Secrets Manager.",
            code="provider_credentials",
        ) from exc
    value = raw.decode() if isinstance(raw, bytes) else str(raw)
    if value.lstrip().startswith("{"):
        try:
            document = json.loads(value)
        except ValueError:
            document = None
        if isinstance(document, dict):
            for field in _SECRET_KEY_FIELDS:
                if isinstance(document.get(field), str):
                    return str(document[field])
    return value.strip()
