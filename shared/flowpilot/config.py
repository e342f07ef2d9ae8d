"""Settings from the environment, parsed and validated once.

Nothing else in FlowPilot reads ``os.environ``: every module asks :func:`get_settings`.
A bad value fails at first use with a :class:`~flowpilot.errors.ConfigError` that names
the environment variable, never with a traceback deep inside a handler.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from flowpilot.errors import ConfigError


class Settings(BaseModel):
    """Every setting FlowPilot reads; each field's alias is its environment variable."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    # Database
    database_url: str | None = Field(None, alias="DATABASE_URL")
    database_url_secret_arn: str | None = Field(None, alias="DATABASE_URL_SECRET_ARN")
    home: Path = Field(Path("~/.flowpilot"), alias="FLOWPILOT_HOME")
    db_prepare_threshold: int | None = Field(5, alias="FLOWPILOT_DB_PREPARE_THRESHOLD")
    db_pool_max: int = Field(2, ge=1, le=50, alias="FLOWPILOT_DB_POOL_MAX")
    db_connect_timeout: float = Field(10.0, gt=0, alias="FLOWPILOT_DB_CONNECT_TIMEOUT")
    db_statement_timeout_ms: int = Field(15_000, ge=0, alias="FLOWPILOT_DB_STATEMENT_TIMEOUT_MS")

    # Runtime
    stage: str = Field("local", alias="FLOWPILOT_STAGE")
    log_level: str = Field("INFO", alias="LOG_LEVEL")
    tracing: bool = Field(False, alias="FLOWPILOT_TRACING")
    execute_transport: Literal["inprocess", "lambda"] = Field(
        "inprocess", alias="FLOWPILOT_EXECUTE_TRANSPORT"
    )
    agent_execute_function: str | None = Field(None, alias="AGENT_EXECUTE_FUNCTION")
    signal_queue_url: str | None = Field(None, alias="SIGNAL_QUEUE_URL")
    webhook_secret_arn: str | None = Field(None, alias="WEBHOOK_SECRET_ARN")
    webhook_secret: str | None = Field(None, alias="FLOWPILOT_WEBHOOK_SECRET")
    sender_email: str | None = Field(None, alias="SENDER_EMAIL")
    max_body_bytes: int = Field(256 * 1024, ge=1024, alias="FLOWPILOT_MAX_BODY_BYTES")
    heartbeat_fanout_threshold: int = Field(5, ge=1, alias="FLOWPILOT_HEARTBEAT_FANOUT")
    heartbeat_function: str | None = Field(None, alias="HEARTBEAT_FUNCTION")

    # Local stack
    host: str = Field("127.0.0.1", alias="FLOWPILOT_HOST")
    port: int = Field(8000, ge=1, le=65535, alias="FLOWPILOT_PORT")
    heartbeat_interval_s: float = Field(60.0, gt=0, alias="FLOWPILOT_HEARTBEAT_INTERVAL")

    # Model provider (absent: the offline heuristic reasoner answers)
    model_provider: Literal["openai", "heuristic"] | None = Field(
        None, alias="FLOWPILOT_MODEL_PROVIDER"
    )
    openai_api_key: str | None = Field(None, alias="OPENAI_API_KEY")
    openai_api_key_secret_arn: str | None = Field(None, alias="OPENAI_API_KEY_SECRET_ARN")
    openai_base_url: str | None = Field(None, alias="OPENAI_BASE_URL")
    model: str = Field("gpt-4o-mini", alias="FLOWPILOT_MODEL")
    model_timeout_s: float = Field(30.0, gt=0, alias="FLOWPILOT_MODEL_TIMEOUT")

    # Authentication
    jwt_secret: str | None = Field(None, alias="SUPABASE_JWT_SECRET")
    jwks_url: str | None = Field(None, alias="SUPABASE_JWKS_URL")
    jwt_audience: str = Field("authenticated", alias="FLOWPILOT_JWT_AUDIENCE")
    jwt_issuer: str | None = Field(None, alias="FLOWPILOT_JWT_ISSUER")
    jwt_tenant_claim: str = Field("tenant_id", alias="FLOWPILOT_JWT_TENANT_CLAIM")

    @field_validator("db_prepare_threshold", mode="before")
    @classmethod
    def _none_disables_prepare(cls, value: object) -> object:
        # Supabase's transaction pooler cannot keep prepared statements: "none" turns them off.
        if isinstance(value, str) and value.strip().lower() in {"", "none", "off", "disabled"}:
            return None
        return value

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level

    @property
    def data_dir(self) -> Path:
        """Where the embedded PostgreSQL keeps its files."""
        return self.home.expanduser() / "pgdata"

    @property
    def execute_via_lambda(self) -> bool:
        """Lambda transport only where there is a function to invoke (not in local runs)."""
        return self.execute_transport == "lambda" and bool(self.agent_execute_function)

    @property
    def model_configured(self) -> bool:
        if self.model_provider == "heuristic":
            return False
        return bool(
            self.model_provider
            or self.openai_api_key
            or self.openai_api_key_secret_arn
            or self.openai_base_url
        )


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build settings from ``environ``; a bad value raises ConfigError naming its variable."""
    source = os.environ if environ is None else environ
    aliases = {field.alias for field in Settings.model_fields.values() if field.alias}
    values = {name: source[name] for name in aliases if source.get(name) not in (None, "")}
    # An explicitly empty prepare threshold means "off", so keep it.
    if source.get("FLOWPILOT_DB_PREPARE_THRESHOLD") == "":
        values["FLOWPILOT_DB_PREPARE_THRESHOLD"] = ""
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors()
        ]
        raise ConfigError("invalid settings: " + "; ".join(problems)) from None


@cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()


def reset_settings() -> None:
    """Forget the cached settings (tests and the CLI change the environment)."""
    get_settings.cache_clear()
