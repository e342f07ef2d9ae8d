"""The scripted model server speaks enough OpenAI for the real client; the guard blocks the rest."""

# The fixtures are imported by name until the shared conftest registers them, so every test
# parameter named after one looks like a redefinition to ruff.

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, cast

import openai
import pytest
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageParam,
    ChatCompletionToolParam,
)
from openai.types.shared_params import ResponseFormatJSONSchema

from flowpilot.testing import scripted_model as script
from flowpilot.testing.network_guard import (
    ExternalNetworkBlocked,
    block_external_network,
    install_network_guard,
    network_guard_installed,
    uninstall_network_guard,
)
from flowpilot.testing.scripted_model import ScriptedModelServer

MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hello"}]

WEATHER_TOOL: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def client_for(server: ScriptedModelServer, **kwargs: Any) -> openai.OpenAI:
    options: dict[str, Any] = {"max_retries": 0, **kwargs}
    return openai.OpenAI(api_key="test", base_url=server.base_url, **options)


def test_text_reply(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.text("hi there", prompt_tokens=7, completion_tokens=3))

    completion = client_for(scripted_model).chat.completions.create(
        model="gpt-test", messages=MESSAGES
    )

    assert completion.choices[0].message.content == "hi there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-test"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.total_tokens) == (7, 10)
    assert scripted_model.requests == [{"model": "gpt-test", "messages": MESSAGES}]
    assert scripted_model.pending == 0


def test_tool_call_round_trip(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(
        script.tool_call("get_weather", {"city": "Oslo"}, call_id="call_1"),
        script.text("It is sunny in Oslo."),
    )
    client = client_for(scripted_model)

    first = client.chat.completions.create(model="m", messages=MESSAGES, tools=[WEATHER_TOOL])
    message = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    assert isinstance(call, ChatCompletionMessageFunctionToolCall)
    assert call.id == "call_1"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Oslo"}

    second = client.chat.completions.create(
        model="m",
        tools=[WEATHER_TOOL],
        messages=[
            *MESSAGES,
            cast(ChatCompletionAssistantMessageParam, message.model_dump(exclude_none=True)),
            {"role": "tool", "tool_call_id": call.id, "content": '{"sky": "clear"}'},
        ],
    )
    assert second.choices[0].message.content == "It is sunny in Oslo."
    assert [r["tools"] for r in scripted_model.requests] == [[WEATHER_TOOL], [WEATHER_TOOL]]
    assert scripted_model.requests[1]["messages"][-1]["role"] == "tool"


def test_several_tool_calls_in_one_reply(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.tool_calls([("a", {"x": 1}), ("b", {})]))

    message = client_for(scripted_model).chat.completions.create(model="m", messages=MESSAGES)

    calls = [
        c
        for c in message.choices[0].message.tool_calls or []
        if isinstance(c, ChatCompletionMessageFunctionToolCall)
    ]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("a", {"x": 1}),
        ("b", {}),
    ]
    assert calls[0].id != calls[1].id


def test_structured_reply(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.structured({"verdict": "approve", "score": 0.9}))
    response_format: ResponseFormatJSONSchema = {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"verdict": {"type": "string"}, "score": {"type": "number"}},
                "required": ["verdict", "score"],
                "additionalProperties": False,
            },
        },
    }

    completion = client_for(scripted_model).chat.completions.create(
        model="m",
        messages=MESSAGES,
        response_format=response_format,
    )

    content = completion.choices[0].message.content
    assert content is not None
    assert json.loads(content) == {"verdict": "approve", "score": 0.9}
    assert scripted_model.requests[0]["response_format"] == response_format


def test_invalid_json_is_delivered_as_is(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.invalid_json())

    completion = client_for(scripted_model).chat.completions.create(
        model="m", messages=MESSAGES, response_format={"type": "json_object"}
    )

    content = completion.choices[0].message.content
    assert content == '{"not json'
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)


def test_delay_longer_than_client_timeout(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.delay(2.0, script.text("too late")))
    client = client_for(scripted_model, timeout=0.3)

    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=MESSAGES)

    assert time.monotonic() - started < 1.5
    assert len(scripted_model.requests) == 1


def test_rate_limit_then_success(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.error(429, "slow down", retry_after=0), script.text("ok"))

    completion = client_for(scripted_model, max_retries=1).chat.completions.create(
        model="m", messages=MESSAGES
    )

    assert completion.choices[0].message.content == "ok"
    assert len(scripted_model.requests) == 2


def test_rate_limit_without_retries(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.error(429, "slow down"))

    with pytest.raises(openai.RateLimitError) as caught:
        client_for(scripted_model).chat.completions.create(model="m", messages=MESSAGES)

    assert caught.value.status_code == 429
    assert caught.value.code == "rate_limit_exceeded"


def test_retry_after_headers(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.error(429, retry_after=2))
    request = urllib.request.Request(
        f"{scripted_model.base_url}/chat/completions",
        data=json.dumps({"model": "m", "messages": MESSAGES}).encode(),
        headers={"Content-Type": "application/json"},
    )

    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)

    assert caught.value.code == 429
    assert caught.value.headers["retry-after"] == "2"
    assert caught.value.headers["retry-after-ms"] == "2000"
    assert json.loads(caught.value.read())["error"]["type"] == "requests"


def test_server_error(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.error(500, "boom"))

    with pytest.raises(openai.InternalServerError) as caught:
        client_for(scripted_model).chat.completions.create(model="m", messages=MESSAGES)

    assert caught.value.status_code == 500
    assert "boom" in caught.value.message


def test_empty_queue_fails_loudly_without_retries(scripted_model: ScriptedModelServer) -> None:
    client = client_for(scripted_model, max_retries=2)

    with pytest.raises(openai.InternalServerError, match="no reply queued"):
        client.chat.completions.create(model="m", messages=MESSAGES)

    assert len(scripted_model.requests) == 1


def test_streaming_is_refused(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.text("unused"))

    with pytest.raises(openai.BadRequestError, match="streaming not supported"):
        client_for(scripted_model).chat.completions.create(
            model="m", messages=MESSAGES, stream=True
        )

    assert scripted_model.pending == 1


def test_models_list(scripted_model: ScriptedModelServer) -> None:
    models = client_for(scripted_model).models.list()

    assert [m.id for m in models] == ["scripted"]


def test_reset_clears_queue_and_requests(scripted_model: ScriptedModelServer) -> None:
    scripted_model.queue(script.text("a"), script.text("b"))
    client_for(scripted_model).chat.completions.create(model="m", messages=MESSAGES)
    assert (scripted_model.pending, len(scripted_model.requests)) == (1, 1)

    scripted_model.reset()

    assert (scripted_model.pending, scripted_model.requests) == (0, [])


def test_server_context_manager_stops() -> None:
    with ScriptedModelServer() as server:
        url = server.base_url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url


# The network guard (autouse here through the no_external_network import).


def test_guard_allows_loopback(scripted_model: ScriptedModelServer) -> None:
    port = int(scripted_model.base_url.rsplit(":", 1)[1].split("/")[0])
    for host in ("127.0.0.1", "localhost"):
        with socket.create_connection((host, port), timeout=2):
            pass
    with socket.socket() as sock:
        sock.settimeout(2)
        sock.connect(("127.0.0.1", port))


def test_guard_allows_unix_sockets(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
        server.bind(path)
        server.listen()
        client.connect(path)


def test_guard_blocks_external_ip_at_once() -> None:
    started = time.monotonic()
    blocked = pytest.raises(ExternalNetworkBlocked, match=r"203\.0\.113\.5:443")
    with socket.socket() as sock, blocked:
        sock.connect(("203.0.113.5", 443))
    with socket.socket() as sock, pytest.raises(ExternalNetworkBlocked):
        sock.connect_ex(("203.0.113.5", 443))
    with socket.socket(socket.AF_INET6) as sock, pytest.raises(ExternalNetworkBlocked):
        sock.connect(("2001:db8::1", 443, 0, 0))
    with pytest.raises(ExternalNetworkBlocked):
        socket.create_connection(("203.0.113.5", 443), timeout=5)
    assert time.monotonic() - started < 0.5


def test_guard_blocks_hostnames_without_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dns(*args: object, **kwargs: object) -> None:
        raise AssertionError("the guard resolved a blocked hostname")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with pytest.raises(ExternalNetworkBlocked, match=r"api\.openai\.com:443"):
        socket.create_connection(("api.openai.com", 443))
    with socket.socket() as sock, pytest.raises(ExternalNetworkBlocked, match=r"example\.com:80"):
        sock.connect(("example.com", 80))


def test_real_provider_is_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = openai.OpenAI(api_key="x", max_retries=0)

    started = time.monotonic()
    with pytest.raises((ExternalNetworkBlocked, openai.APIConnectionError)) as caught:
        client.models.list()

    assert time.monotonic() - started < 1.0
    chain: BaseException | None = caught.value
    while chain is not None and not isinstance(chain, ExternalNetworkBlocked):
        chain = chain.__cause__ or chain.__context__
    assert isinstance(chain, ExternalNetworkBlocked)
    assert chain.host == "api.openai.com"


def test_guard_nests_and_uninstalls() -> None:
    original = socket.socket.connect
    assert network_guard_installed()
    with block_external_network():
        assert socket.socket.connect is original
    assert network_guard_installed()

    uninstall_network_guard()
    try:
        assert not network_guard_installed()
        assert socket.socket.connect is not original
    finally:
        install_network_guard()
    assert socket.socket.connect is original
