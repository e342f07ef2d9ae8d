"""``internal:<name>``: Python functions of the package, registered with :func:`internal`."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import import_module
from typing import Any

from flowpilot.errors import SkillRefused
from flowpilot.skills.context import SkillContext

InternalSkill = Callable[[SkillContext, dict[str, Any]], Any]
_REGISTRY: dict[str, InternalSkill] = {}

# Modules whose import registers the built-in internal skills.
_MODULES = (
    "flowpilot.skills.internal.memory",
    "flowpilot.skills.internal.objectives",
    "flowpilot.skills.internal.briefing",
    "flowpilot.skills.internal.signals",
    "flowpilot.skills.internal.email",
    "flowpilot.skills.internal.http",
    "flowpilot.skills.internal.reflection",
)


def internal(name: str) -> Callable[[InternalSkill], InternalSkill]:
    """Register a function as the internal skill handler ``internal:<name>``."""

    def register(function: InternalSkill) -> InternalSkill:
        _REGISTRY[name] = function
        return function

    return register


@cache
def registry() -> dict[str, InternalSkill]:
    for module in _MODULES:
        import_module(module)
    return _REGISTRY


def run(ctx: SkillContext, arguments: dict[str, Any]) -> Any:
    function = registry().get(ctx.target)
    if function is None:
        raise SkillRefused(f"no internal handler named {ctx.target!r}", code="handler_unavailable")
    return function(ctx, arguments)


def problem(target: str, config: dict[str, Any]) -> str | None:
    return None if target in registry() else f"no internal handler named {target!r}"
