"""The OpenAI-compatible model client: OpenAI, Gemini's OpenAI endpoint, Ollama, llama.cpp.

``openai`` is imported on the first call only (cold start). The client does its own retries
(429 and 5xx with backoff inside the caller's timeout), checks the token budget before every
HTTP request, and repairs one invalid structured reply or tool call before giving up.
"""

from __future__ import annotations

import functools
import json
import re
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from flowpilot.ai.accounting import estimate_tokens
from flowpilot.ai.types import AIConfig, ModelReply, TokenBudget, ToolCall, Usage
from flowpilot.errors import ModelError, ModelTimeout
from flowpilot.observability import logger

BACKOFF_BASE_S = 0.25
MAX_HINTED_WAIT_S = 5.0
SCHEMA_REPAIR = (
    "Your reply did not match the required JSON schema: {errors}. Reply again with only valid JSON."
)
TOOL_REPAIR = (
    "Your call to the tool `{name}` was not usable: {errors}. "
    "Call `{name}` again with its arguments as one valid JSON object."
)
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass
class _Progress:
    """What one complete() has cost so far, across its HTTP attempts."""

    deadline: float
    started: float = field(default_factory=time.monotonic)
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    def add(self, usage: Usage) -> None:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.estimated = self.estimated or usage.estimated

    def usage(self) -> Usage:
        return Usage(self.prompt_tokens, self.completion_tokens, estimated=self.estimated)


class OpenAIModelClient:
    """ModelClient for any provider that speaks OpenAI Chat Completions."""

    def __init__(self, config: AIConfig, *, timeout_s: float, max_retries: int = 2) -> None:
        self.config = config
        self.timeout_s = timeout_s
        self.max_retries = max(0, max_retries)
        self._sdk: Any = None

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_model: type[BaseModel] | None = None,
        budget: TokenBudget | None = None,
    ) -> ModelReply:
        started = time.monotonic()
        progress = _Progress(deadline=started + self.timeout_s, started=started)
        offered = offered_tools(tools)
        conversation = list(messages)
        repaired = False
        while True:
            completion = self._create(conversation, offered, response_model, budget, progress)
            model = completion.get("model") or self.config.model
            message = _first_message(completion)
            content = message.get("content") if isinstance(message.get("content"), str) else None
            calls, problem = _tool_calls(message)
            if problem is None and calls:
                return self._reply(progress, model, content, calls)
            if problem is not None:
                errors, repair = problem
            elif response_model is None:
                return self._reply(progress, model, content, [])
            else:
                try:
                    parsed = response_model.model_validate_json(content or "")
                except ValidationError as exc:
                    errors = validation_errors(exc)
                    repair = [
                        {"role": "assistant", "content": content or ""},
                        {"role": "user", "content": SCHEMA_REPAIR.format(errors=_join(errors))},
                    ]
                else:
                    return self._reply(progress, model, content, [], parsed=parsed)
            if repaired:
                raise ModelError(
                    "The model's reply did not have the required shape, even after a "
                    f"correction: {_join(errors)}",
                    code="invalid_output",
                    details={"errors": errors, "attempts": progress.attempts},
                )
            repaired = True
            conversation.extend(repair)

    def _reply(
        self,
        progress: _Progress,
        model: str,
        content: str | None,
        calls: list[ToolCall],
        *,
        parsed: Any = None,
    ) -> ModelReply:
        return ModelReply(
            content=content,
            tool_calls=calls,
            usage=progress.usage(),
            provider=self.config.provider,
            model=model,
            duration_ms=int((time.monotonic() - progress.started) * 1000),
            parsed=parsed,
            attempts=progress.attempts,
        )

    def _client(self) -> Any:
        if self._sdk is None:
            from flowpilot.ai.routing import OPENAI_DEFAULT_BASE_URL, api_key

            # Passed explicitly so the SDK never falls back to reading the environment.
            base_url = self.config.base_url or OPENAI_DEFAULT_BASE_URL
            self._sdk = _sdk_client(base_url, api_key(self.config) or "not-needed", self.timeout_s)
        return self._sdk

    def _create(
        self,
        conversation: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        response_model: type[BaseModel] | None,
        budget: TokenBudget | None,
        progress: _Progress,
    ) -> dict[str, Any]:
        """One chat completion (as plain JSON), retried on 429, 5xx and lost connections
        within the deadline."""
        import openai

        request: dict[str, Any] = {"model": self.config.model, "messages": conversation}
        if tools:
            request.update(tools=tools, tool_choice="auto", parallel_tool_calls=False)
        if response_model is not None:
            request["response_format"] = response_format(response_model)
        # The body is plain JSON already: serialized once, it is both the token estimate and
        # what is sent. (``chat.completions.create`` would re-walk it against the SDK's typed
        # params first, about 1 ms per call for a 15 KB prompt.)
        body = to_json(request, fallback=str)
        estimate = estimate_tokens(body)
        retry = 0
        while True:
            remaining = progress.deadline - time.monotonic()
            if remaining <= 0:
                raise self._timeout()
            if budget is not None:
                budget.check(estimate)
            progress.attempts += 1
            hint: float | None = None
            cause: Exception
            try:
                # The reply is read as plain JSON: building the SDK's typed objects from it
                # would cost more than everything done with it here.
                completion = self._client().post(
                    "/chat/completions",
                    cast_to=dict,
                    content=body,
                    options={"timeout": remaining},  # JSON is the SDK's default type
                )
            except openai.APITimeoutError as exc:
                raise self._timeout() from exc
            except openai.APIConnectionError as exc:
                failure = ModelError(
                    f"The model provider at {self._host()} could not be reached.",
                    code="provider_unreachable",
                )
                cause, retryable = exc, True
            except openai.APIStatusError as exc:
                failure, cause = status_error(exc.status_code, exc.body), exc
                headers = exc.response.headers
                hint = retry_after_s(headers)
                retryable = exc.status_code == 429 or exc.status_code >= 500
                retryable = retryable and headers.get("x-should-retry") != "false"
            else:
                if not isinstance(completion, dict):
                    raise ModelError(
                        "The model provider's reply was not a chat completion.",
                        code="provider_error",
                    )
                usage = _usage(completion, estimate)
                progress.add(usage)
                if budget is not None:
                    budget.spend(usage)
                return completion
            # A hint longer than MAX_HINTED_WAIT_S is not worth waiting for: back off instead.
            wait = hint if hint is not None and hint <= MAX_HINTED_WAIT_S else None
            wait = BACKOFF_BASE_S * 2**retry if wait is None else wait
            if not retryable or retry >= self.max_retries:
                raise failure from cause
            if wait >= progress.deadline - time.monotonic():
                raise failure from cause  # no time left to wait for the provider
            logger.warning(
                "model call failed, retrying",
                code=failure.code,
                model=self.config.model,
                wait_s=round(wait, 3),
                attempt=progress.attempts,
            )
            time.sleep(wait)
            retry += 1

    def _timeout(self) -> ModelTimeout:
        return ModelTimeout(
            f"The model did not answer within {self.timeout_s:g} seconds.",
            details={"timeout_s": self.timeout_s},
        )

    def _host(self) -> str:
        from urllib.parse import urlsplit

        return urlsplit(self.config.base_url or "https://api.openai.com").hostname or "?"


def offered_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Tools as the provider accepts them: FlowPilot's own ``x-`` keys removed."""
    offered: list[dict[str, Any]] = []
    for tool in tools or []:
        clean = {key: value for key, value in tool.items() if not key.startswith("x-")}
        if isinstance(clean.get("function"), dict):
            clean["function"] = {
                key: value for key, value in clean["function"].items() if not key.startswith("x-")
            }
        offered.append(clean)
    return offered


@functools.cache
def response_format(model: type[BaseModel]) -> dict[str, Any]:
    """The ``response_format`` asking for ``model`` as strict JSON (built once per model)."""
    name = _SCHEMA_NAME.sub("_", model.__name__)[:64] or "reply"
    schema = strict_json_schema(model.model_json_schema())
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def strict_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema that OpenAI's strict mode accepts: closed objects, every property
    required, no defaults, and no ``$ref`` with sibling keywords."""
    root = json.loads(json.dumps(schema))
    definitions = root.get("$defs", {})
    return _strict(root, definitions)


def _strict(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_strict(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1 and ref.startswith("#/$defs/"):
        target = definitions.get(ref.removeprefix("#/$defs/"), {})
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    node.pop("default", None)
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), dict):
            node[key] = {name: _strict(sub, definitions) for name, sub in node[key].items()}
    for key in ("items", "anyOf", "allOf", "oneOf", "prefixItems", "additionalProperties"):
        if key in node and not isinstance(node[key], bool):
            node[key] = _strict(node[key], definitions)
    if node.get("type") == "object" or "properties" in node:
        node.setdefault("additionalProperties", False)
    if isinstance(node.get("properties"), dict):
        node["required"] = list(node["properties"])
    return node


def validation_errors(exc: ValidationError) -> list[dict[str, str]]:
    errors = [
        {"loc": ".".join(str(part) for part in error["loc"]) or "(reply)", "msg": error["msg"]}
        for error in exc.errors(include_url=False)
    ]
    return errors[:10]


def status_error(status: int, body: Any) -> ModelError:
    said = body.get("message") if isinstance(body, dict) else None
    details = {"status": status, "provider_message": str(said)[:300] if said else None}
    code = "provider_error"
    if status == 429:
        code = "rate_limited"
        message = f"The model provider is rate limiting requests (HTTP {status})."
    elif status in (401, 403):
        message = f"The model provider refused the API key (HTTP {status})."
    elif status >= 500:
        message = f"The model provider failed (HTTP {status})."
    else:
        message = f"The model provider rejected the request (HTTP {status})."
    return ModelError(message, code=code, details=details)


def retry_after_s(headers: Any) -> float | None:
    """The provider's own retry hint in seconds (``retry-after-ms`` or ``retry-after``)."""
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000)
        seconds = headers.get("retry-after")
        if seconds is None:
            return None
        try:
            return max(0.0, float(seconds))
        except ValueError:
            when = parsedate_to_datetime(seconds)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _first_message(completion: dict[str, Any]) -> dict[str, Any]:
    """The first choice's message; empty when a provider sent none."""
    choices = completion.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    return message if isinstance(message, dict) else {}


def _tool_calls(
    message: dict[str, Any],
) -> tuple[list[ToolCall], tuple[list[dict[str, str]], list[dict[str, Any]]] | None]:
    """The message's tool calls, or the errors and the repair messages for an unusable one."""
    calls: list[ToolCall] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        # A tool that was not offered is the engine's to refuse (and record), not ours.
        name = str(function.get("name"))
        raw = function.get("arguments") or ""
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            arguments, reason = None, f"arguments are not valid JSON ({exc})"
        else:
            reason = "arguments must be a JSON object"
        if not isinstance(arguments, dict):
            errors = [{"loc": name, "msg": reason}]
            text = TOOL_REPAIR.format(name=name, errors=reason)
            return [], (errors, [{"role": "user", "content": text}])
        calls.append(ToolCall(id=str(call.get("id")), name=name, arguments=arguments))
    return calls, None


def _usage(completion: dict[str, Any], estimate: int) -> Usage:
    usage = completion.get("usage")
    if isinstance(usage, dict) and usage.get("prompt_tokens") is not None:
        return Usage(int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0))
    # Some local servers report no usage: count it by estimate rather than as free.
    output = estimate_tokens(_first_message(completion).get("content") or "")
    return Usage(estimate, output, estimated=True)


def _join(errors: list[dict[str, str]]) -> str:
    return "; ".join(f"{error['loc']}: {error['msg']}" for error in errors)


@functools.lru_cache(maxsize=32)
def _sdk_client(base_url: str, key: str, timeout_s: float) -> Any:
    """One SDK client (and its connection pool) per endpoint, key and timeout, per process:
    creating one builds a TLS context (~25 ms), and reusing it keeps the connection warm."""
    import openai

    return openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout_s, max_retries=0)
