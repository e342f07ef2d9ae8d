"""Skill handlers by kind: ``internal:``, ``webhook:``, ``lambda:``, ``sql:`` (and later
``mcp:`` and ``a2a:``). :func:`run_handler` is the dispatcher; :func:`handler_problem` tells
the linter whether a handler string can be resolved.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from flowpilot.errors import SkillRefused
from flowpilot.skills.context import SkillContext

Handler = Callable[[SkillContext, dict[str, Any]], Any]

# kind -> module with `run(ctx, arguments)` and `problem(target, config) -> str | None`
KINDS = {
    "internal": "flowpilot.skills.handlers.internal",
    "webhook": "flowpilot.skills.handlers.webhook",
    "lambda": "flowpilot.skills.handlers.lambda_invoke",
    "sql": "flowpilot.skills.handlers.sql_template",
}
LATER = {"mcp", "a2a"}


def _module(kind: str) -> Any:
    if kind in LATER:
        raise SkillRefused(f"{kind}: handlers arrive with federation", code="handler_unavailable")
    if kind not in KINDS:
        raise SkillRefused(f"unknown handler kind {kind!r}", code="handler_unavailable")
    return import_module(KINDS[kind])


def run_handler(ctx: SkillContext, arguments: dict[str, Any]) -> Any:
    kind = str(ctx.skill["handler"]).split(":", 1)[0]
    return _module(kind).run(ctx, arguments)


def handler_problem(handler: str, config: dict[str, Any]) -> str | None:
    """Why ``handler`` cannot run, or None when it resolves."""
    kind, _, target = handler.partition(":")
    if not target:
        return f"handler {handler!r} has no target after the colon"
    if kind in LATER:
        return None  # resolved at run time by the federation layer
    if kind not in KINDS:
        return f"unknown handler kind {kind!r}"
    problem: str | None = import_module(KINDS[kind]).problem(target, config)
    return problem
