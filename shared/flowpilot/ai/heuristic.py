"""The offline heuristic reasoner: the ModelClient interface with no model behind it.

It keeps FlowPilot working without credentials (law 4). On a fresh question it calls the first
offered tool whose required arguments it can fill; the engine offers tools ranked best-first by
the skill scorer, so the choice stays metadata-driven (law 1). Once tools have answered, it
composes a plain answer from their results, leads with what they found, and labels itself.
"""

from __future__ import annotations

import enum
import json
import re
import time
import types
import uuid
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from flowpilot.ai.accounting import estimate_tokens
from flowpilot.ai.types import AIConfig, ModelReply, TokenBudget, ToolCall, Usage
from flowpilot.errors import ModelError

OFFLINE_LABEL = "(Answered by FlowPilot's offline reasoner: no AI model is configured.)"
NO_EVIDENCE = "I could not find anything to answer that with."
SIDE_EFFECTS_KEY = "x-flowpilot-side-effects"
TEXT_PARAMS = frozenset(
    {
        "query",
        "q",
        "text",
        "search",
        "question",
        "topic",
        "title",
        "subject",
        "content",
        "goal",
        "message",
    }
)
ANSWER_FIELDS = ("answer", "content", "text", "message", "reply")
LABEL_KEYS = ("title", "name", "summary", "subject", "label", "text", "content", "description")
_SKIP_KEYS = frozenset({"ok", "success"})
_UUID = re.compile(r"\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b", re.I)
_EMPTIED = re.compile(r"\s*\(\s*(?:\w+[\s:#=]*)?\x00\s*\)|\s*\b(?:ids?|uuid)\s*[:=#]?\s*\x00", re.I)
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_MISSING: Any = object()
_MAX_PIECE = 600


class HeuristicModelClient:
    """ModelClient that answers from the conversation alone; its usage is an estimate."""

    def __init__(self, config: AIConfig) -> None:
        self.config = config

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_model: type[BaseModel] | None = None,
        budget: TokenBudget | None = None,
    ) -> ModelReply:
        # It costs nothing, so the budget never stops it; its estimate is still recorded.
        started = time.monotonic()
        user_text, results = current_turn(messages)
        call = choose_tool(tools, user_text) if results is None else None
        parsed: BaseModel | None = None
        if call is not None:
            content, output = None, json.dumps(call.arguments)
        else:
            text = compose_answer(results or [])
            parsed = fill_model(response_model, text) if response_model is not None else None
            content = parsed.model_dump_json() if parsed is not None else text
            output = content
        usage = Usage(estimate_tokens(messages, tools), estimate_tokens(output), estimated=True)
        if budget is not None:
            budget.spend(usage)
        return ModelReply(
            content=content,
            tool_calls=[call] if call is not None else [],
            usage=usage,
            provider="heuristic",
            model=self.config.model,
            duration_ms=int((time.monotonic() - started) * 1000),
            parsed=parsed,
        )


def current_turn(messages: list[dict[str, Any]]) -> tuple[str, list[tuple[str, Any]] | None]:
    """The last user message's text, and the tool results since it (None: no tool ran yet)."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    user_text = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    names: dict[str, str] = {}
    results: list[tuple[str, Any]] = []
    for message in messages[last_user + 1 :]:
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                names[str(call.get("id"))] = str((call.get("function") or {}).get("name", ""))
        if message.get("role") == "tool":
            name = message.get("name") or names.get(str(message.get("tool_call_id")), "")
            results.append((str(name), message.get("content")))
    return user_text.strip(), (results or None)


def choose_tool(tools: list[dict[str, Any]] | None, user_text: str) -> ToolCall | None:
    """The first offered tool whose arguments fit. The engine offers tools best-first by the
    skill scorer, so this follows the skills' own metadata; safety is the trust gate's job."""
    functions = [tool.get("function", tool) for tool in tools or [] if isinstance(tool, dict)]
    for fn in functions:
        arguments = fill_arguments(fn.get("parameters") or {}, user_text)
        if arguments is not None and fn.get("name"):
            return ToolCall(f"call_offline_{uuid.uuid4().hex[:16]}", str(fn["name"]), arguments)
    return None


def fill_arguments(schema: dict[str, Any], user_text: str) -> dict[str, Any] | None:
    """Arguments for a tool's JSON Schema, or None when a required one cannot be filled."""
    properties: dict[str, Any] = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        value = _fill(name, properties.get(name) or {}, user_text)
        if value is _MISSING:
            return None
        arguments[name] = value
    if user_text and user_text not in arguments.values():
        for name, prop in properties.items():
            if name not in arguments and _text_like(name) and _takes_text(prop):
                arguments[name] = user_text  # an optional search text still narrows the tool
                break
    return arguments


def _fill(name: str, prop: dict[str, Any], user_text: str) -> Any:
    if user_text and _text_like(name) and _takes_text(prop):
        return user_text
    if "const" in prop:
        return prop["const"]
    if "default" in prop:
        return prop["default"]
    if _nullable(prop):
        return None
    for option in [prop, *prop.get("anyOf", []), *prop.get("oneOf", [])]:
        if isinstance(option, dict) and option.get("enum"):
            return option["enum"][0]
    return _MISSING


def _text_like(name: str) -> bool:
    words = [word.lower() for word in _WORDS.findall(name)]
    return name.lower() in TEXT_PARAMS or (bool(words) and words[-1] in TEXT_PARAMS)


def _types(prop: dict[str, Any]) -> set[str]:
    kinds = prop.get("type")
    found = set(kinds) if isinstance(kinds, list) else {kinds} if isinstance(kinds, str) else set()
    for option in [*prop.get("anyOf", []), *prop.get("oneOf", [])]:
        if isinstance(option, dict):
            found |= _types(option)
    return found


def _takes_text(prop: dict[str, Any]) -> bool:
    if "enum" in prop or "const" in prop:
        return False
    kinds = _types(prop)
    return not kinds or "string" in kinds


def _nullable(prop: dict[str, Any]) -> bool:
    return prop.get("nullable") is True or "null" in _types(prop)


def compose_answer(results: list[tuple[str, Any]]) -> str:
    """What the tools found, in plain words, then the offline label. Never raw JSON or ids."""
    pieces = [piece for name, content in results if (piece := _render(name, content))]
    return f"{' '.join(pieces) or NO_EVIDENCE}\n\n{OFFLINE_LABEL}"


def _render(tool: str, content: Any) -> str:
    data = _parse(content)
    if isinstance(data, dict):
        summary, failure = data.get("summary"), data.get("error")
        if isinstance(summary, str) and summary.strip():
            text = summary
        elif failure:
            reason = failure.get("message") if isinstance(failure, dict) else failure
            step = _words(tool) or "one step"
            text = f"The {step} step did not work" + (f": {reason}" if reason else "")
        else:
            return " ".join(_sentence(part) for part in _describe(data))
    elif isinstance(data, list):
        text = _describe_list("results", data)
    else:
        text = "" if data is None else str(data)
    return _sentence(text)


def _parse(content: Any) -> Any:
    if isinstance(content, list):  # content parts
        content = " ".join(_text(part) for part in content)
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def _describe(data: dict[str, Any]) -> list[str]:
    """One short phrase per top-level key, ids and empty values left out."""
    parts: list[str] = []
    for key, value in data.items():
        if _is_id(key, value) or key in _SKIP_KEYS or value in (None, "", {}):
            continue
        label = _words(key)
        if isinstance(value, list):
            parts.append(_describe_list(label, value))
        elif isinstance(value, dict):
            inner = [
                f"{_words(k)} {_scalar(v)}"
                for k, v in value.items()
                if not isinstance(v, dict | list) and not _is_id(k, v) and v not in (None, "")
            ]
            if inner:
                parts.append(f"{label}: {', '.join(inner[:4])}")
        else:
            parts.append(f"{label}: {_scalar(value)}")
    return parts[:6]


def _describe_list(label: str, items: list[Any]) -> str:
    count = len(items)
    if count == 0:
        return f"no {label}"
    noun = label[:-1] if count == 1 and label.endswith("s") else label
    names = [name for item in items[:3] if (name := _item_name(item))]
    more = f" and {count - 3} more" if count > 3 and names else ""
    return f"{count} {noun}" + (f": {'; '.join(names)}{more}" if names else "")


def _item_name(item: Any) -> str:
    if isinstance(item, dict):
        for key in LABEL_KEYS:
            if isinstance(item.get(key), str) and item[key].strip():
                return item[key].strip()
        words = [f"{_words(k)} {_scalar(v)}" for k, v in item.items() if _plain(k, v)]
        return ", ".join(words[:3])
    if isinstance(item, list):
        return ""
    return _scalar(item)


def _plain(key: str, value: Any) -> bool:
    return not isinstance(value, dict | list) and value not in (None, "") and not _is_id(key, value)


def _is_id(key: str, value: Any) -> bool:
    lowered = key.lower()
    return (
        lowered in ("id", "ids", "uuid")
        or lowered.endswith(("_id", "_ids", "_uuid"))
        or (isinstance(value, str) and _UUID.fullmatch(value.strip()) is not None)
    )


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _words(name: str) -> str:
    return " ".join(word.lower() for word in _WORDS.findall(name))


def _sentence(text: str) -> str:
    # An id goes, and so does a bracket that held only it: "(job 3f2a...)".
    text = _EMPTIED.sub("", _UUID.sub("\x00", text)).replace("\x00", "")
    text = " ".join(text.split())
    text = re.sub(r"\s+([,.;:])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text).strip(" ;,:")
    if len(text) > _MAX_PIECE:
        text = text[: _MAX_PIECE - 3].rsplit(" ", 1)[0] + "..."
    if text and text[-1] not in ".!?":
        text += "."
    return text[:1].upper() + text[1:]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str(content.get("text") or "")
    if isinstance(content, list):
        return " ".join(_text(part) for part in content)
    return ""


def fill_model(model: type[BaseModel], text: str) -> BaseModel:
    """An instance of ``model``: text fields get the answer, lists are empty, the rest defaults
    (or the first choice a type allows)."""
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        value = _value(info.annotation, info, text)
        if value is not _MISSING:
            values[name] = value
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ModelError(
            f"The offline reasoner could not fill in {model.__name__}.",
            code="invalid_output",
            details={"errors": [str(error["msg"]) for error in exc.errors()][:10]},
        ) from exc


def _value(annotation: Any, info: FieldInfo | None, text: str) -> Any:
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is str or (_is_union(origin) and str in args):
        limits = [getattr(m, "max_length", None) for m in (info.metadata if info else [])]
        limit = next((n for n in limits if isinstance(n, int)), None)
        return text if limit is None else text[:limit]
    if annotation in (list, set, tuple, frozenset) or origin in (list, set, tuple, frozenset):
        return []
    if info is not None and not info.is_required():
        return _MISSING  # its default
    if _is_union(origin):
        if type(None) in args:
            return None
        return _value(args[0], None, text)
    if origin is Literal:
        return args[0]
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return next(iter(annotation))
        if issubclass(annotation, BaseModel):
            return fill_model(annotation, text)
        if issubclass(annotation, bool | int | float):
            return annotation()
    if annotation is dict or origin is dict:
        return {}
    return None


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType
