"""Settings: read once from the environment, a bad value names its variable."""

from __future__ import annotations

import pytest

from flowpilot.config import load_settings
from flowpilot.errors import ConfigError


def test_defaults_need_no_environment() -> None:
    settings = load_settings({})
    assert settings.database_url is None
    assert settings.execute_transport == "inprocess"
    assert settings.db_prepare_threshold == 5
    assert not settings.model_configured


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("FLOWPILOT_DB_POOL_MAX", "lots"),
        ("FLOWPILOT_DB_POOL_MAX", "0"),
        ("FLOWPILOT_PORT", "70000"),
        ("FLOWPILOT_EXECUTE_TRANSPORT", "carrier-pigeon"),
        ("LOG_LEVEL", "LOUD"),
        ("FLOWPILOT_MODEL_TIMEOUT", "-1"),
    ],
)
def test_a_bad_value_fails_naming_its_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({variable: value})
    assert variable in raised.value.message
    assert raised.value.code == "config_invalid"


def test_prepared_statements_can_be_turned_off_for_the_transaction_pooler() -> None:
    assert load_settings({"FLOWPILOT_DB_PREPARE_THRESHOLD": "none"}).db_prepare_threshold is None
    assert load_settings({"FLOWPILOT_DB_PREPARE_THRESHOLD": ""}).db_prepare_threshold is None
    assert load_settings({"FLOWPILOT_DB_PREPARE_THRESHOLD": "0"}).db_prepare_threshold == 0


def test_a_model_is_configured_by_a_key_or_a_base_url() -> None:
    assert load_settings({"OPENAI_API_KEY": "sk-test"}).model_configured
    assert load_settings({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}).model_configured
    heuristic = {"OPENAI_API_KEY": "sk-test", "FLOWPILOT_MODEL_PROVIDER": "heuristic"}
    assert not load_settings(heuristic).model_configured


def test_the_lambda_transport_needs_a_function_to_invoke() -> None:
    assert not load_settings({"FLOWPILOT_EXECUTE_TRANSPORT": "lambda"}).execute_via_lambda
    both = {"FLOWPILOT_EXECUTE_TRANSPORT": "lambda", "AGENT_EXECUTE_FUNCTION": "fp-exec"}
    assert load_settings(both).execute_via_lambda
