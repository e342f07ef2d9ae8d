"""Shared fixtures: a real PostgreSQL per session, a fresh clone per test, clean settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flowpilot.config import reset_settings
from flowpilot.db import Database, database
from flowpilot.tenancy import NewTenant, create_tenant
from flowpilot.testing.aws import aws, moto_server  # noqa: F401
from flowpilot.testing.databases import TestPostgres

# no_external_network is autouse: no test may reach a host outside this machine.
from flowpilot.testing.fixtures import (  # noqa: F401
    no_external_network,
    scripted_model,
    scripted_model_server,
)
from flowpilot.testing.scripted_model import ScriptedModelServer

_ENV_PREFIXES = ("FLOWPILOT_", "OPENAI_", "SUPABASE_", "DATABASE_URL", "AGENT_EXECUTE")


@pytest.fixture(autouse=True)
def clean_settings(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """Each test starts from default settings, with its own FLOWPILOT_HOME."""
    import os

    for name in list(os.environ):
        if name.startswith(_ENV_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FLOWPILOT_HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "FlowPilotTest")
    reset_settings()
    yield
    reset_settings()


@pytest.fixture
def model(
    scripted_model: ScriptedModelServer,  # noqa: F811 - the imported fixture, requested
    monkeypatch: pytest.MonkeyPatch,
) -> ScriptedModelServer:
    """The scripted model, configured as the provider FlowPilot's settings point at."""
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("FLOWPILOT_MODEL_TIMEOUT", "1.5")
    reset_settings()
    return scripted_model


@pytest.fixture(scope="session")
def postgres() -> Iterator[TestPostgres]:
    server = TestPostgres.start()
    server.build_template()
    yield server
    server.stop()


@pytest.fixture
def db(postgres: TestPostgres, monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    """A fresh database cloned from the schema template; also what get_db() returns."""
    with postgres.clone() as fresh:
        monkeypatch.setattr(database, "_db", fresh)
        monkeypatch.setenv("DATABASE_URL", fresh.url)
        reset_settings()
        yield fresh


@pytest.fixture
def tenant(db: Database) -> NewTenant:
    return create_tenant(db, "Acme Plumbing", modules=("flowpilot",))


@pytest.fixture
def other_tenant(db: Database) -> NewTenant:
    return create_tenant(db, "Globex", modules=("flowpilot",))
