"""ChatCompletionFunction's entry: its FastAPI app is built when the module is imported.

Every invocation of this function serves HTTP, so FastAPI is on its path: importing it and
building the app in the Lambda init phase (which runs on a full CPU) is cheaper than on the
first request. Building the app opens no connection; the pool opens on first use.
"""

from __future__ import annotations

from flowpilot.api.lambda_http import chat_handler, warm

warm("create_chat_app")

__all__ = ["chat_handler"]
