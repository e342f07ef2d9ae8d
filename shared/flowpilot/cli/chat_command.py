"""``flowpilot chat "message" [--thread ID]``: one turn with the operator from a terminal."""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from flowpilot.cli.output import emit
from flowpilot.cli.tenants import add_tenant_option, resolve_tenant


def register(sub: Any) -> None:
    chat = sub.add_parser("chat", help="send the operator a message and print its answer")
    chat.add_argument("message")
    chat.add_argument("--thread", type=uuid.UUID, help="continue this thread (default: a new one)")
    add_tenant_option(chat)
    chat.add_argument("--json", action="store_true", help="print the whole thread view as JSON")
    chat.set_defaults(handler=_chat)


def _chat(args: argparse.Namespace) -> int:
    from flowpilot.chat.threads import ask
    from flowpilot.db import get_db
    from flowpilot.execute.models import Actor

    db = get_db()
    tenant_id = resolve_tenant(db, args.tenant)
    view = ask(db, tenant_id, Actor(type="user", id="cli"), args.message, thread_id=args.thread)
    emit(view.model_dump(mode="json"), as_json=args.json, human=_human)
    return 0


def _human(view: dict[str, Any]) -> str:
    answer = view.get("message")
    lines = [answer["content"] if answer else "(no answer yet)"]
    if answer and answer["work_log"]:
        lines.append("")
        lines.extend(f"- {step}" for step in answer["work_log"])
    if answer and answer["confirmations"]:
        lines.append("")
        lines.extend(
            f"Waiting for your approval: {c['summary']} "
            f"(flowpilot approvals approve {c['approval_id']})"
            for c in answer["confirmations"]
        )
    lines += ["", f"(continue this thread with --thread {view['thread_id']})"]
    return "\n".join(lines)
