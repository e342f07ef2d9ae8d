"""The model layer: the real openai client against the scripted server, routing, the offline
reasoner and token accounting."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from typing import Any, cast

import pytest
from pydantic import BaseModel

from flowpilot.ai.accounting import (
    RunBudget,
    estimate_cost_usd,
    tenant_token_usage,
    tenant_tokens_remaining,
)
from flowpilot.ai.client import model_client
from flowpilot.ai.heuristic import NO_EVIDENCE, OFFLINE_LABEL, HeuristicModelClient
from flowpilot.ai.openai_client import OpenAIModelClient
from flowpilot.ai.routing import resolve_ai_config, route_details, set_route
from flowpilot.ai.types import AIConfig, Usage
from flowpilot.config import get_settings, reset_settings
from flowpilot.db import Database
from flowpilot.errors import BudgetExceeded, InvalidRequest, ModelError, ModelTimeout
from flowpilot.tenancy import NewTenant
from flowpilot.testing import scripted_model as script
from flowpilot.testing.scripted_model import ScriptedModelServer

USER: list[dict[str, Any]] = [{"role": "user", "content": "Which jobs are overdue?"}]
SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search_jobs",
        "description": "Find jobs.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
        "x-flowpilot-side-effects": "read",
    },
}


class Verdict(BaseModel):
    answer: str
    main_claim: str
    limitations: list[str]


def openai_client(server: ScriptedModelServer, **kwargs: Any) -> OpenAIModelClient:
    config = AIConfig("chat", "openai", "scripted", base_url=server.base_url, api_key="test")
    return OpenAIModelClient(config, timeout_s=kwargs.pop("timeout_s", 5.0), **kwargs)


def offline_client() -> HeuristicModelClient:
    return HeuristicModelClient(AIConfig("chat", "heuristic", "heuristic-v1", source="offline"))


# --- the OpenAI-compatible client -------------------------------------------------------------


def test_text_reply(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(
        script.text("Two jobs are overdue.", prompt_tokens=12, completion_tokens=4)
    )

    reply = openai_client(scripted_model).complete(USER)

    assert reply.content == "Two jobs are overdue."
    assert reply.tool_calls == []
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 4)
    assert not reply.usage.estimated
    assert (reply.provider, reply.model, reply.attempts) == ("openai", "scripted", 1)
    assert scripted_model.requests[0]["messages"] == USER
    assert "tools" not in scripted_model.requests[0]


def test_tool_call_is_parsed_and_flowpilot_keys_are_not_sent(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.queue(script.tool_call("search_jobs", {"query": "overdue"}, call_id="call_1"))

    reply = openai_client(scripted_model).complete(USER, tools=[SEARCH_TOOL])

    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_1", "search_jobs", {"query": "overdue"})
    ]
    sent = scripted_model.requests[0]
    assert sent["tool_choice"] == "auto"
    assert sent["parallel_tool_calls"] is False
    assert "x-flowpilot-side-effects" not in sent["tools"][0]["function"]
    assert SEARCH_TOOL["function"]["x-flowpilot-side-effects"] == "read"  # caller's copy kept


def test_rate_limit_is_retried(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.error(429, retry_after=0), script.text("ok"))

    reply = openai_client(scripted_model).complete(USER)

    assert reply.content == "ok"
    assert reply.attempts == 2
    assert len(scripted_model.requests) == 2


def test_server_errors_exhaust_retries(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.error(500), script.error(500), script.text("never"))

    with pytest.raises(ModelError) as raised:
        openai_client(scripted_model, max_retries=1).complete(USER)

    assert raised.value.code == "provider_error"
    assert "500" in raised.value.message
    assert len(scripted_model.requests) == 2


def test_rate_limit_after_retries_is_named(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.error(429, retry_after=0))

    with pytest.raises(ModelError) as raised:
        openai_client(scripted_model, max_retries=0).complete(USER)

    assert raised.value.code == "rate_limited"
    assert "429" in raised.value.message


def test_slow_model_times_out_quickly(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.delay(3, script.text("too late")))
    started = time.monotonic()

    with pytest.raises(ModelTimeout) as raised:
        openai_client(scripted_model, timeout_s=0.3).complete(USER)

    assert time.monotonic() - started < 2
    assert "0.3 seconds" in raised.value.message


def test_unreachable_provider(scripted_model: ScriptedModelServer) -> None:
    config = AIConfig("chat", "openai", "m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ModelError) as raised:
        OpenAIModelClient(config, timeout_s=2, max_retries=0).complete(USER)
    assert raised.value.code == "provider_unreachable"


def test_structured_output(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.structured({"answer": "A", "main_claim": "B", "limitations": []}))

    reply = openai_client(scripted_model).complete(USER, response_model=Verdict)

    assert reply.parsed == Verdict(answer="A", main_claim="B", limitations=[])
    response_format = scripted_model.requests[0]["response_format"]
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]
    assert schema["strict"] is True and schema["name"] == "Verdict"
    assert schema["schema"]["additionalProperties"] is False
    assert schema["schema"]["required"] == ["answer", "main_claim", "limitations"]


def test_invalid_structured_output_is_repaired_once(scripted_model: ScriptedModelServer) -> None:
    valid = {"answer": "A", "main_claim": "B", "limitations": ["C"]}
    scripted_model.queue(script.invalid_json(), script.structured(valid))

    reply = openai_client(scripted_model).complete(USER, response_model=Verdict)

    assert reply.parsed == Verdict(**valid)
    assert reply.attempts == 2
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (20, 10)  # summed
    repair = scripted_model.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"not json'}
    assert repair[-1]["role"] == "user"
    assert repair[-1]["content"].startswith("Your reply did not match the required JSON schema:")
    assert repair[-1]["content"].endswith("Reply again with only valid JSON.")


def test_invalid_structured_output_twice_fails(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.invalid_json(), script.structured({"answer": "only"}))

    with pytest.raises(ModelError) as raised:
        openai_client(scripted_model).complete(USER, response_model=Verdict)

    assert raised.value.code == "invalid_output"
    assert {e["loc"] for e in raised.value.details["errors"]} == {"main_claim", "limitations"}
    assert len(scripted_model.requests) == 2


def test_replies_that_are_not_chat_completions_fail_clearly(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.queue(script.raw(["not", "a", "completion"]))
    with pytest.raises(ModelError) as raised:
        openai_client(scripted_model).complete(USER)
    assert raised.value.code == "provider_error"

    # No choices at all: nothing to read, so the structured reply is asked for again, once.
    scripted_model.queue(script.raw({"object": "chat.completion", "choices": []}))
    scripted_model.queue(script.raw({"choices": [{"message": {"content": ["parts"]}}]}))
    with pytest.raises(ModelError) as raised:
        openai_client(scripted_model).complete(USER, response_model=Verdict)
    assert raised.value.code == "invalid_output"
    assert len(scripted_model.requests) == 3


def test_tool_arguments_that_are_not_json_are_repaired(
    scripted_model: ScriptedModelServer,
) -> None:
    broken = script.Reply(
        message={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_bad",
                    "type": "function",
                    "function": {"name": "search_jobs", "arguments": '{"query": '},
                }
            ],
        },
        finish_reason="tool_calls",
    )
    scripted_model.queue(broken, script.tool_call("search_jobs", {"query": "overdue"}))

    reply = openai_client(scripted_model).complete(USER, tools=[SEARCH_TOOL])

    assert reply.tool_calls[0].arguments == {"query": "overdue"}
    assert reply.attempts == 2
    assert "search_jobs" in scripted_model.requests[1]["messages"][-1]["content"]

    scripted_model.queue(broken, broken)
    with pytest.raises(ModelError) as raised:
        openai_client(scripted_model).complete(USER, tools=[SEARCH_TOOL])
    assert raised.value.code == "invalid_output"


def test_budget_is_checked_before_any_request(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.text("never sent"))
    budget = RunBudget(run_token_limit=1_000, tenant_tokens_remaining=0, daily_token_budget=200_000)

    with pytest.raises(BudgetExceeded) as raised:
        openai_client(scripted_model).complete(USER, budget=budget)

    assert raised.value.code == "daily_budget_exceeded"
    assert raised.value.message == (
        "Today's token budget for this workspace is spent (200,000 of 200,000)."
    )
    assert scripted_model.requests == []


def test_budget_spends_what_the_provider_reports(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.text("ok", prompt_tokens=30, completion_tokens=7))
    budget = RunBudget(run_token_limit=10_000, tenant_tokens_remaining=None)

    openai_client(scripted_model).complete(USER, budget=budget)

    assert (budget.prompt_tokens, budget.completion_tokens, budget.spent) == (30, 7, 37)
    with pytest.raises(BudgetExceeded) as raised:
        RunBudget(run_token_limit=10, tenant_tokens_remaining=None).check(11)
    assert raised.value.code == "run_budget_exceeded"


def test_openai_is_not_imported_until_a_model_is_called() -> None:
    code = (
        "import sys\n"
        "import flowpilot.ai.client, flowpilot.ai.routing, flowpilot.ai.heuristic\n"
        "import flowpilot.ai.openai_client, flowpilot.ai.accounting\n"
        "print('openai' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


# --- routing ----------------------------------------------------------------------------------


def test_defaults_without_credentials_are_offline() -> None:
    config = resolve_ai_config("chat")
    assert (config.provider, config.model, config.source) == (
        "heuristic",
        "heuristic-v1",
        "offline",
    )
    assert resolve_ai_config("critic").tier == "cheap"
    assert resolve_ai_config("signal_planner").tier == "standard"
    assert isinstance(model_client(config), HeuristicModelClient)
    with pytest.raises(InvalidRequest):
        resolve_ai_config(cast(Any, "poetry"))


def test_base_url_in_the_environment_turns_the_model_on(
    monkeypatch: pytest.MonkeyPatch, scripted_model: ScriptedModelServer
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.base_url)
    monkeypatch.setenv("FLOWPILOT_MODEL", "scripted")
    monkeypatch.setenv("FLOWPILOT_MODEL_TIMEOUT", "7")
    reset_settings()

    config = resolve_ai_config("heartbeat")

    assert (config.provider, config.model, config.source) == ("openai", "scripted", "settings")
    assert (config.base_url, config.tier) == (scripted_model.base_url, "cheap")
    client = model_client(config)
    assert isinstance(client, OpenAIModelClient) and client.timeout_s == 7
    scripted_model.queue(script.text("pong"))
    assert client.complete(USER).content == "pong"


def test_tenant_route_overrides_one_function(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-platform")
    reset_settings()
    set_route(db, tenant.tenant_id, "chat", "openai", "gpt-4o", "standard", None, "ops@acme")

    chat = resolve_ai_config("chat", tenant_id=tenant.tenant_id, db=db)
    heartbeat = resolve_ai_config("heartbeat", tenant_id=tenant.tenant_id, db=db)

    assert (chat.provider, chat.model, chat.source, chat.api_key) == (
        "openai",
        "gpt-4o",
        "route",
        "sk-platform",
    )
    assert (heartbeat.model, heartbeat.source) == ("gpt-4o-mini", "settings")


def test_route_to_another_server_gets_no_platform_key(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-platform")
    reset_settings()
    set_route(
        db, tenant.tenant_id, "chat", "openai", "llama3", None, "http://localhost:11434/v1", None
    )

    config = resolve_ai_config("chat", tenant_id=tenant.tenant_id, db=db)

    assert (config.base_url, config.model, config.api_key) == (
        "http://localhost:11434/v1",
        "llama3",
        None,
    )
    with pytest.raises(InvalidRequest):
        set_route(db, tenant.tenant_id, "chat", "openai", "m", None, "file:///etc/passwd", None)


def test_route_without_credentials_falls_back_offline(db: Database, tenant: NewTenant) -> None:
    set_route(db, tenant.tenant_id, "reflect", "openai", "gpt-4o", "cheap", None, None)

    config = resolve_ai_config("reflect", tenant_id=tenant.tenant_id, db=db)

    assert (config.provider, config.source) == ("heuristic", "offline")


def test_set_route_keeps_history_and_details_show_no_key(
    db: Database, tenant: NewTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    reset_settings()
    first = set_route(db, tenant.tenant_id, "critic", "openai", "gpt-4o", "cheap", None, "ann")
    second = set_route(
        db, tenant.tenant_id, "critic", "openai", "gpt-4.1-mini", "cheap", None, "bob"
    )
    _insert_run(db, tenant, "heartbeat", state={"ai_function": "critic"}, prompt=40, completion=2)
    _insert_run(db, tenant, "chat", prompt=100, completion=10)

    details = route_details(db, tenant.tenant_id, "critic")

    assert (details["provider"], details["model"], details["source"]) == (
        "openai",
        "gpt-4.1-mini",
        "route",
    )
    assert [o["model"] for o in details["overrides"]] == ["gpt-4.1-mini", "gpt-4o"]
    assert [o["active"] for o in details["overrides"]] == [True, False]
    assert [o["changed_by"] for o in details["overrides"]] == ["bob", "ann"]
    assert first["route_id"] != second["route_id"]
    runs = details["recent_executions"]
    assert len(runs) == 1 and runs[0]["total_tokens"] == 42
    assert {"provider", "model", "prompt_tokens", "started_at", "status"} <= set(runs[0])
    assert "sk-very-secret" not in json.dumps(details, default=str)
    chat = route_details(db, tenant.tenant_id, "chat")
    assert [r["total_tokens"] for r in chat["recent_executions"]] == [110]
    assert chat["source"] == "settings" and chat["overrides"] == []


# --- the offline heuristic reasoner -----------------------------------------------------------


def test_heuristic_picks_the_first_tool_it_can_fill() -> None:
    needs_id = {
        "type": "function",
        "function": {
            "name": "get_invoice",
            "parameters": {
                "type": "object",
                "properties": {"invoice_number": {"type": "integer"}},
                "required": ["invoice_number"],
            },
        },
    }
    with_extras = {
        "type": "function",
        "function": {
            "name": "search_jobs",
            "parameters": {
                "type": "object",
                "properties": {
                    "search_query": {"type": "string"},
                    "status": {"type": "string", "enum": ["open", "closed"]},
                    "since": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "limit": {"type": "integer"},
                },
                "required": ["search_query", "status", "since"],
            },
        },
    }

    unmarked: dict[str, Any] = {
        "type": "function",
        "function": {**SEARCH_TOOL["function"], "name": "later"},
    }
    del unmarked["function"]["x-flowpilot-side-effects"]

    reply = offline_client().complete(USER, tools=[needs_id, with_extras, unmarked])

    [call] = reply.tool_calls
    assert call.name == "search_jobs"
    assert call.arguments == {
        "search_query": "Which jobs are overdue?",
        "status": "open",
        "since": None,
    }
    assert reply.content is None and reply.provider == "heuristic" and reply.usage.estimated


def test_heuristic_follows_the_offered_order() -> None:
    write = {
        "type": "function",
        "function": {
            "name": "send_message",
            "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
            "x-flowpilot-side-effects": "write",
        },
    }
    # The engine offers tools best-first (the scorer's order); the heuristic keeps it.
    reply = offline_client().complete(USER, tools=[SEARCH_TOOL, write])
    assert reply.tool_calls[0].name == "search_jobs"
    assert reply.tool_calls[0].arguments == {"query": "Which jobs are overdue?"}
    reply = offline_client().complete(USER, tools=[write, SEARCH_TOOL])
    assert reply.tool_calls[0].name == "send_message"


def test_heuristic_answers_from_tool_results() -> None:
    job = str(uuid.uuid4())
    messages: list[dict[str, Any]] = [
        *USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search_jobs"}},
                {"id": "c2", "type": "function", "function": {"name": "list_invoices"}},
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps({"summary": f"Two jobs are overdue (job {job}).", "id": job}),
        },
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": json.dumps(
                {
                    "invoices": [
                        {"invoice_id": job, "title": "Leak at 5 Elm St"},
                        {"invoice_id": job, "title": "Boiler service"},
                    ],
                    "total_due": 420,
                }
            ),
        },
    ]

    reply = offline_client().complete(messages, tools=[SEARCH_TOOL], response_model=Verdict)

    assert reply.tool_calls == []
    verdict = reply.parsed
    assert isinstance(verdict, Verdict)
    assert verdict.answer.startswith("Two jobs are overdue")
    assert "2 invoices: Leak at 5 Elm St; Boiler service" in verdict.answer
    assert "Total due: 420." in verdict.answer
    assert verdict.answer.endswith(OFFLINE_LABEL)
    assert job not in verdict.answer and "{" not in verdict.answer
    assert verdict.main_claim == verdict.answer and verdict.limitations == []
    assert json.loads(reply.content or "")["answer"] == verdict.answer

    plain = offline_client().complete(messages)
    assert plain.content == verdict.answer


def test_heuristic_without_evidence_says_so() -> None:
    reply = offline_client().complete(USER, tools=[])
    assert reply.content == f"{NO_EVIDENCE}\n\n{OFFLINE_LABEL}"
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


# --- accounting -------------------------------------------------------------------------------


def test_tenant_tokens_remaining_counts_todays_runs(db: Database, tenant: NewTenant) -> None:
    assert tenant_tokens_remaining(db, tenant.tenant_id) == 200_000
    _insert_run(db, tenant, "chat", prompt=1_000, completion=500)
    _insert_run(db, tenant, "heartbeat", prompt=250, completion=250)
    _insert_run(db, tenant, "chat", prompt=9_999, completion=1, days_ago=2)

    assert tenant_token_usage(db, tenant.tenant_id) == (2_000, 200_000)
    assert tenant_tokens_remaining(db, tenant.tenant_id) == 198_000
    budget = RunBudget.for_tenant(db, tenant.tenant_id, run_token_limit=50_000)
    with pytest.raises(BudgetExceeded) as raised:
        budget.check(198_001)
    assert raised.value.code == "daily_budget_exceeded"


def test_cost_estimates() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)
    assert estimate_cost_usd("gpt-4o-mini", usage) == pytest.approx(0.75)
    assert estimate_cost_usd("gpt-4o-mini-2024-07-18", usage) == pytest.approx(0.75)
    assert estimate_cost_usd("gpt-4o", usage) == pytest.approx(12.5)
    assert estimate_cost_usd("gpt-4.1-mini", Usage(1000, 500)) == pytest.approx(0.0012)
    assert estimate_cost_usd("models/gemini-2.0-flash", usage) == pytest.approx(0.5)
    assert estimate_cost_usd("heuristic-v1", usage) == 0.0
    assert estimate_cost_usd("llama3", usage) == 0.0


def _insert_run(
    db: Database,
    tenant: NewTenant,
    trigger: str,
    *,
    prompt: int,
    completion: int,
    state: dict[str, Any] | None = None,
    days_ago: int = 0,
) -> None:
    from psycopg.types.json import Jsonb

    with db.transaction(tenant.tenant_id) as tx:
        tx.sql(  # a run's final statement adds its tokens to the day's usage
            "INSERT INTO tenant_usage AS u (tenant_id, day, tokens) "
            "VALUES (%(tenant)s, current_date - %(days)s, %(tokens)s) "
            "ON CONFLICT (tenant_id, day) DO UPDATE SET tokens = u.tokens + EXCLUDED.tokens",
            {"tenant": tenant.tenant_id, "days": days_ago, "tokens": prompt + completion},
        )
        tx.sql(
            "INSERT INTO agent_runs (tenant_id, trigger, status, provider, model, "
            "prompt_tokens, completion_tokens, state, started_at) "
            "VALUES (%(tenant)s, %(trigger)s, 'completed', 'openai', 'gpt-4o-mini', "
            "%(prompt)s, %(completion)s, %(state)s, now() - make_interval(days => %(days)s))",
            {
                "tenant": tenant.tenant_id,
                "trigger": trigger,
                "prompt": prompt,
                "completion": completion,
                "state": Jsonb(state or {}),
                "days": days_ago,
            },
        )


def test_settings_are_clean() -> None:
    assert get_settings().model_configured is False
