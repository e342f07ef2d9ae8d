"""Named SQL queries, loaded once from the ``sql/*.sql`` files beside this module.

A file holds blocks that start with ``-- name: query_name``; parameters are ``%(name)s``.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


def parse_queries(text: str) -> dict[str, str]:
    """Split one .sql file into its named blocks."""
    parts = _NAME.split(text)
    named: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in named:
            raise ValueError(f"query {name!r} is defined twice")
        named[name] = body.strip().rstrip(";")
    return named


@cache
def all_queries() -> dict[str, str]:
    """Every named query of the package, by name."""
    named: dict[str, str] = {}
    for entry in sorted(resources.files("flowpilot.db").joinpath("sql").iterdir(), key=str):
        if not entry.name.endswith(".sql"):
            continue
        for name, body in parse_queries(entry.read_text(encoding="utf-8")).items():
            if name in named:
                raise ValueError(f"query {name!r} is defined in more than one file")
            named[name] = body
    return named


def query(name: str) -> str:
    try:
        return all_queries()[name]
    except KeyError:
        raise KeyError(f"no SQL query named {name!r}") from None
