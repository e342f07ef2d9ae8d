"""A transaction in progress (``Tx``) and the driver-error mapping both layers share.

``Database`` (in ``database.py``) opens transactions; a ``Tx`` sends named statements on
one, the first of them in one pipeline with the transaction's opening statements.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flowpilot.db.queries import query
from flowpilot.errors import DatabaseError, InvalidRequest

if TYPE_CHECKING:
    import psycopg

Row = dict[str, Any]


@dataclass
class Stats:
    """Round trips sent to the server by this process, for benchmarks and tests."""

    round_trips: int = 0


def as_json(value: Any) -> Any:
    """Mark a value (a list, say) to be sent as a jsonb document."""
    from psycopg.types.json import Jsonb

    return Jsonb(value)


Statement = tuple[Any, Mapping[str, Any] | None]


class Tx:
    """A transaction in progress; run named queries with :meth:`one`, :meth:`all`, :meth:`run`.

    The transaction's opening statements are not sent on their own: they travel in one
    pipeline with the first query, so BEGIN costs no extra round trip.
    """

    def __init__(
        self,
        conn: psycopg.Connection[Row],
        tenant_id: uuid.UUID | None,
        stats: Stats,
        opener: list[Statement],
    ) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        self._stats = stats
        self._opener = opener
        self.opened = False

    def one(self, query_name: str, /, **params: Any) -> Row | None:
        """The first row of a named query, or None."""
        rows, _ = self._named(query_name, params)
        return rows[0] if rows else None

    def all(self, query_name: str, /, **params: Any) -> list[Row]:
        """Every row of a named query."""
        return self._named(query_name, params)[0]

    def run(self, query_name: str, /, **params: Any) -> int:
        """Run a named statement; returns the number of rows it touched."""
        return self._named(query_name, params)[1]

    def sql(self, statement: Any, params: Any = None) -> list[Row]:
        """Run literal SQL (tests, maintenance, psycopg.sql compositions); returns its rows."""
        return self._send([(statement, params)], label="sql")[0]

    def template(self, statement: Any, params: Mapping[str, Any], *, max_rows: int) -> list[Row]:
        """A fixed SQL template with caller values and this transaction's tenant bound in.

        At most ``max_rows`` + 1 rows are fetched, so a caller can tell the result was cut.
        """
        if "tenant_id" in params:
            raise InvalidRequest("tenant_id comes from the transaction's binding, not a caller")
        import psycopg

        if not self.opened:
            self._send([], label="begin")  # fetchmany needs its own cursor, so open first
        self._stats.round_trips += 1
        try:
            cursor = self.conn.execute(statement, self._bind(params))
            return cursor.fetchmany(max_rows + 1) if cursor.description else []
        except psycopg.Error as exc:
            raise wrap_error(exc, "template") from exc

    def _named(self, name: str, params: Mapping[str, Any]) -> tuple[list[Row], int]:
        if "tenant_id" in params:
            raise InvalidRequest("tenant_id comes from the transaction's binding, not a caller")
        return self._send([(query(name), self._bind(params))], label=name)

    def _bind(self, params: Mapping[str, Any]) -> dict[str, Any]:
        from psycopg.types.json import Jsonb

        # dicts are JSON documents; lists are SQL arrays unless wrapped with as_json().
        bound = {
            key: Jsonb(value) if isinstance(value, dict) else value for key, value in params.items()
        }
        bound["tenant_id"] = self.tenant_id
        return bound

    def _send(self, statements: list[Statement], *, label: str) -> tuple[list[Row], int]:
        """Send statements (after the opener, if still pending) in one round trip."""
        import psycopg

        batch = [*self._opener, *statements] if not self.opened else list(statements)
        self._stats.round_trips += 1
        try:
            if len(batch) == 1:
                cursor = self.conn.execute(batch[0][0], batch[0][1])
                rows = cursor.fetchall() if cursor.description else []
                count = cursor.rowcount
            else:
                # Leaving the block sends one Sync and waits once: one round trip.
                with self.conn.pipeline():
                    cursors = [self.conn.execute(sql_, args) for sql_, args in batch]
                target = cursors[-1]
                rows = target.fetchall() if target.description else []
                count = target.rowcount
        except psycopg.Error as exc:
            if len(batch) > 1:
                # After an error inside a pipeline psycopg's prepared-statement cache can
                # disagree with the server; a closed connection is dropped by the pool.
                self.conn.close()
            raise wrap_error(exc, label) from exc
        self.opened = True
        return rows, count


def wrap_error(exc: Exception, what: str) -> DatabaseError:
    """A FlowPilot error for a driver error; the SQLSTATE goes into the details."""
    import psycopg.errors as pgerr

    state = getattr(getattr(exc, "diag", None), "sqlstate", None)
    if isinstance(exc, pgerr.QueryCanceled):
        return DatabaseError(f"{what}: statement timed out", code="statement_timeout")
    if isinstance(exc, pgerr.ReadOnlySqlTransaction):
        return DatabaseError(f"{what}: writes are not allowed here", code="read_only")
    if isinstance(exc, pgerr.InsufficientPrivilege):
        return DatabaseError(f"{what}: not permitted for this tenant", code="forbidden_row")
    if isinstance(exc, pgerr.ForeignKeyViolation):
        return DatabaseError(
            f"{what}: refers to a missing row",
            code="missing_reference",
            details={"sqlstate": state},
        )
    if isinstance(exc, pgerr.UniqueViolation):
        return DatabaseError(
            f"{what}: already exists", code="conflict", details={"sqlstate": state}
        )
    # The server's text can quote row contents: it goes to the log, not to callers.
    from flowpilot.observability import logger

    logger.warning("database error", query=what, sqlstate=state, error=str(exc)[:500])
    return DatabaseError(f"{what} failed", details={"sqlstate": state})
