"""``sql:<template>``: a fixed, parameterised query from the skill pack, bounded four ways.

The template (``config["sql"]``: query, max_rows, timeout_ms) is attached to the skill when
its pack is synced. It runs in a transaction bound to the caller's tenant (Row Level Security
and ``%(tenant_id)s``), read-only unless the skill is a write, under a statement timeout, and
returns at most ``max_rows`` rows. The model supplies values, never SQL.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from flowpilot.errors import DatabaseError
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.spec import SqlTemplate

# `%%` is a literal percent; `%(name)s` a parameter; any other `%` is refused by the linter.
_PERCENT = re.compile(r"%%|%\((?P<name>[A-Za-z_][A-Za-z0-9_]*)\)s|%")
_PASSED_THROUGH = {"statement_timeout", "read_only", "forbidden_row", "conflict"}


def placeholders(query: str) -> set[str]:
    return {m["name"] for m in _PERCENT.finditer(query) if m["name"]}


def _template(ctx: SkillContext) -> SqlTemplate:
    try:
        return SqlTemplate.model_validate(ctx.config.get("sql"))
    except ValidationError:
        raise SkillFailed(
            f"skill {ctx.skill.get('name')!r} has no valid sql template", code="invalid_template"
        ) from None


def run(ctx: SkillContext, arguments: dict[str, Any]) -> Any:
    template = _template(ctx)
    if "tenant_id" in arguments:
        raise SkillFailed(
            "tenant_id is bound from the caller's tenant and cannot be an argument",
            code="invalid_arguments",
        )
    wanted = placeholders(template.query) - {"tenant_id"}
    missing = sorted(wanted - arguments.keys())
    if missing:
        raise SkillFailed(
            "missing arguments: " + ", ".join(missing),
            code="invalid_arguments",
            details={"missing": missing},
        )
    params = {name: arguments[name] for name in wanted}
    read_only = ctx.skill.get("side_effects") != "write"  # anything but a declared write reads
    try:
        with ctx.db.transaction(
            ctx.tenant_id, read_only=read_only, statement_timeout_ms=template.timeout_ms
        ) as tx:
            statement = _capped(template.query, template.max_rows, read_only)
            rows = tx.template(statement, params, max_rows=template.max_rows)
    except DatabaseError as exc:
        raise _failure(exc, template) from exc
    kept = rows[: template.max_rows]
    return {
        "rows": [{key: json_safe(value) for key, value in row.items()} for row in kept],
        "truncated": len(rows) > template.max_rows,
        "row_count": len(kept),
    }


def _capped(query: str, max_rows: int, read_only: bool) -> Any:
    """A read SELECT wrapped so the server sends at most ``max_rows`` + 1 rows (the extra one
    tells the result was cut): a broad template never loads a whole table into memory.
    Anything else runs as written (in a read-only transaction, a write then fails clearly)."""
    from psycopg import sql

    text = query.strip()
    if not read_only or not text[:7].lower().startswith("select"):
        return text
    return sql.SQL("SELECT * FROM ({}) AS capped LIMIT {}").format(
        sql.SQL(text.rstrip(";")), sql.Literal(max_rows + 1)
    )


def _failure(exc: DatabaseError, template: SqlTemplate) -> Exception:
    if exc.code == "statement_timeout":
        message = f"the query took longer than {template.timeout_ms} ms"
        return SkillFailed(message, code="statement_timeout")
    if exc.code == "read_only":
        return SkillFailed("this skill only reads; its query tried to write", code="read_only")
    if exc.code in _PASSED_THROUGH:
        return SkillFailed(exc.message, code=exc.code)
    if isinstance(exc.details, dict) and exc.details.get("sqlstate"):
        return SkillFailed(
            f"the query failed: {exc.message}", code="sql_error", details=exc.details
        )
    return exc  # the database itself is unavailable: not the skill's fault, keep it retryable


def json_safe(value: Any) -> Any:
    """A value psycopg returned, as something ``json.dumps`` accepts."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(item) for item in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value)


def problem(target: str, config: dict[str, Any]) -> str | None:
    raw = config.get("sql")
    if not isinstance(raw, dict):
        return f"sql template {target!r} is not defined (the pack needs sql_templates.{target})"
    try:
        template = SqlTemplate.model_validate(raw)
    except ValidationError as exc:
        return f"sql template {target!r}: " + "; ".join(e["msg"] for e in exc.errors())
    query = template.query.strip().rstrip(";").rstrip()
    if ";" in query:
        return f"sql template {target!r} must be a single statement"
    odd = [m.group() for m in _PERCENT.finditer(query) if m.group() != "%%" and not m["name"]]
    if odd:
        return f"sql template {target!r}: parameters must be written %(name)s (or %% for a %)"
    if "tenant_id" not in placeholders(query):
        return f"sql template {target!r} must filter by %(tenant_id)s"
    return None
