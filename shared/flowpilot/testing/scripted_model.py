"""A real HTTP server that answers OpenAI Chat Completions calls from a queue of replies.

Tests point the real ``openai`` client at :attr:`ScriptedModelServer.base_url` and queue the
replies the model should give: text, tool calls, structured output, invalid JSON, delays and
HTTP errors. Every request body is recorded so a test can assert what the client sent.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast

MODEL_ID = "scripted"
NO_REPLY_MESSAGE = "scripted model: no reply queued"
STREAMING_MESSAGE = "streaming not supported by the scripted server"

_ERROR_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("invalid_request_error", "not_found"),
    408: ("timeout_error", "timeout"),
    409: ("invalid_request_error", "conflict"),
    422: ("invalid_request_error", "unprocessable_entity"),
    429: ("requests", "rate_limit_exceeded"),
}


@dataclasses.dataclass(frozen=True)
class Reply:
    """One scripted answer to one chat completion request."""

    message: Mapping[str, Any] | None = None
    finish_reason: str = "stop"
    prompt_tokens: int = 10
    completion_tokens: int = 5
    status: int = 200
    error: Mapping[str, Any] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay_seconds: float = 0.0
    body: Any = None  # sent verbatim instead of a chat completion (a misbehaving provider)


def text(content: str, *, prompt_tokens: int = 10, completion_tokens: int = 5) -> Reply:
    """The assistant answers with ``content``."""
    return Reply(
        message={"role": "assistant", "content": content, "refusal": None},
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


def tool_calls(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> Reply:
    """The assistant calls each ``(name, arguments)`` tool, in order."""
    return _tool_call_reply([(name, arguments, None) for name, arguments in calls])


def tool_call(name: str, arguments: Mapping[str, Any], *, call_id: str | None = None) -> Reply:
    """The assistant calls one tool."""
    return _tool_call_reply([(name, arguments, call_id)])


def structured(obj: Any) -> Reply:
    """The assistant answers a ``response_format`` call with ``obj`` as JSON."""
    return text(json.dumps(obj))


def invalid_json(raw: str = '{"not json') -> Reply:
    """The assistant answers with content that is not valid JSON."""
    return text(raw)


def raw(body: Any) -> Reply:
    """The server answers 200 with ``body`` as JSON, whatever it is."""
    return Reply(body=body)


def delay(seconds: float, then: Reply) -> Reply:
    """Wait ``seconds`` before answering with ``then`` (to make clients time out)."""
    return dataclasses.replace(then, delay_seconds=then.delay_seconds + seconds)


def error(
    status: int,
    message: str = "scripted model error",
    *,
    retry_after: float | None = None,
    code: str | None = None,
) -> Reply:
    """Answer with an HTTP error whose body has the OpenAI ``{"error": {...}}`` shape."""
    error_type, default_code = _ERROR_TYPES.get(status, ("server_error", "server_error"))
    headers: list[tuple[str, str]] = []
    if retry_after is not None:
        # The openai client treats a zero delay as "no hint" and falls back to its own
        # backoff (~0.5 s), so zero is sent as one millisecond to keep retries instant.
        headers.append(("retry-after-ms", str(max(1, round(retry_after * 1000)))))
        headers.append(("retry-after", str(math.ceil(retry_after))))
    return Reply(
        status=status,
        error={"message": message, "type": error_type, "param": None, "code": code or default_code},
        headers=tuple(headers),
    )


def _tool_call_reply(calls: list[tuple[str, Mapping[str, Any], str | None]]) -> Reply:
    return Reply(
        message={
            "role": "assistant",
            "content": None,
            "refusal": None,
            "tool_calls": [
                {
                    "id": call_id or f"call_{uuid.uuid4().hex[:24]}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(dict(arguments))},
                }
                for name, arguments, call_id in calls
            ],
        },
        finish_reason="tool_calls",
    )


class ScriptedModelServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 that plays back queued replies."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("scripted model server is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> ScriptedModelServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.script = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping in a delay() reply
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def _record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def _next_reply(self) -> Reply | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def _completion(self, reply: Reply, model: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-scripted-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": dict(reply.message or {"role": "assistant", "content": ""}),
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    script: ScriptedModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out closes its socket before a delayed reply is written;
        # that is the expected ending of a delay() test, not something to print.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, each reply waits ~40 ms
    # for the client's delayed ACK.
    disable_nagle_algorithm = True
    server_version = "ScriptedModel/1.0"

    @property
    def _script(self) -> ScriptedModelServer:
        return cast(_HTTPServer, self.server).script

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "flowpilot"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_error(404, f"no route for GET {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
            self._send_error(404, f"no route for POST {self.path}")
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send_error(400, "request body is not valid JSON")
            return
        if not isinstance(body, dict):
            self._send_error(400, "request body must be a JSON object")
            return
        script = self._script
        script._record(body)
        if body.get("stream"):
            self._send_error(400, STREAMING_MESSAGE)
            return
        reply = script._next_reply()
        if reply is None:
            # x-should-retry: false makes the client fail at once instead of retrying.
            self._send_error(500, NO_REPLY_MESSAGE, headers=(("x-should-retry", "false"),))
            return
        if reply.delay_seconds > 0 and script._stopping.wait(reply.delay_seconds):
            self.close_connection = True
            return
        if reply.error is not None:
            self._send_json(reply.status, {"error": dict(reply.error)}, reply.headers)
            return
        if reply.body is not None:
            self._send_json(reply.status, reply.body, reply.headers)
            return
        model = body.get("model")
        completion = script._completion(reply, model if isinstance(model, str) else MODEL_ID)
        self._send_json(reply.status, completion, reply.headers)

    def _send_error(
        self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        reply = error(status, message)
        self._send_json(status, {"error": dict(reply.error or {})}, headers)

    def _send_json(
        self, status: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def final_answer(answer: str, limitations: list[str] | None = None) -> Reply:
    """The reasoning engine's structured final answer (its FinalAnswer schema)."""
    return structured(
        {"answer": answer, "main_claim": answer.split(".")[0], "limitations": limitations or []}
    )
