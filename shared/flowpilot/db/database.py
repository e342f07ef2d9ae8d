"""One psycopg 3 pool and the transactions FlowPilot runs on it.

A *tenant-bound* transaction runs as the ``flowpilot_tenant`` role with ``app.tenant_id``
set, so Row Level Security confines every statement to that tenant, and the bound tenant is
passed as ``%(tenant_id)s`` to every named query: callers cannot supply another. A *system*
transaction (no tenant) is for cross-tenant work such as picking tenants with due work.

A transaction's opening statements (BEGIN, then statement timeout, role and tenant set in one
SELECT) travel in one pipeline with its first query, so a transaction of N statements costs
N + 1 round trips. ``Database.one/all/run`` (a single statement in its own transaction) costs
exactly one: the settings and the statement share one pipeline sync, which PostgreSQL runs
as one implicit transaction and commits. Round trips are counted in ``stats``.

Durability: every commit waits for its WAL flush unless the caller says ``durable=False``.
That is for bookkeeping that records no change to the world: a run's opening row, the audit
row of a read-only skill. Such a commit is visible at once and consistent; PostgreSQL
flushes WAL in order, so the next synchronous commit (a write's record, the run's final
checkpoint) or the WAL writer, within a fraction of a second, makes it durable too. A
database crash in that window can lose that bookkeeping, never the record of a change.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from flowpilot.db.queries import query
from flowpilot.db.transaction import Row, Statement, Stats, Tx, wrap_error
from flowpilot.errors import DatabaseError, InvalidRequest

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool


class Database:
    """A lazily opened connection pool and the transactions run on it."""

    def __init__(
        self,
        url: str,
        *,
        max_size: int = 2,
        prepare_threshold: int | None = 5,
        connect_timeout: float = 10.0,
        statement_timeout_ms: int = 15_000,
    ) -> None:
        self.url = url
        self.max_size = max_size
        self.prepare_threshold = prepare_threshold
        self.connect_timeout = connect_timeout
        self.statement_timeout_ms = statement_timeout_ms
        self.stats = Stats()
        self._pool: ConnectionPool[Any] | None = None
        self._lock = threading.Lock()

    @property
    def pool(self) -> ConnectionPool[Any]:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = self._open_pool()
        return self._pool

    def _open_pool(self) -> ConnectionPool[Any]:
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        return ConnectionPool(
            self.url,
            min_size=1,
            max_size=self.max_size,
            timeout=self.connect_timeout,
            kwargs={
                "autocommit": True,
                "row_factory": dict_row,
                "prepare_threshold": self.prepare_threshold,
                "connect_timeout": max(1, int(self.connect_timeout)),
            },
            configure=_configure,
            name="flowpilot",
            open=True,
        )

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def _settings(
        self, tenant: uuid.UUID | None, statement_timeout_ms: int | None, durable: bool
    ) -> Statement:
        """Every setting local to a transaction, in one statement."""
        timeout = (
            self.statement_timeout_ms if statement_timeout_ms is None else statement_timeout_ms
        )
        settings = ["set_config('statement_timeout', %(ms)s, true)"]
        params: dict[str, Any] = {"ms": str(timeout)}
        if tenant is not None:
            # set_config('role', ...) is SET LOCAL ROLE: membership is checked the same way.
            settings.append("set_config('role', 'flowpilot_tenant', true)")
            settings.append("set_config('app.tenant_id', %(tenant)s, true)")
            params["tenant"] = str(tenant)
        if not durable:
            settings.append("set_config('synchronous_commit', 'off', true)")
        return "SELECT " + ", ".join(settings), params

    @contextmanager
    def _borrowed(self, what: str) -> Iterator[psycopg.Connection[Row]]:
        """A pooled connection; driver and pool failures become DatabaseErrors."""
        import psycopg

        try:
            with self.pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise wrap_error(exc, what) from exc
        except _pool_errors() as exc:
            raise DatabaseError(f"database unavailable: {exc}") from exc

    @contextmanager
    def transaction(
        self,
        tenant_id: uuid.UUID | str | None = None,
        *,
        read_only: bool = False,
        statement_timeout_ms: int | None = None,
        durable: bool = True,
    ) -> Iterator[Tx]:
        """A transaction bound to ``tenant_id`` (or a system transaction when None).

        ``durable=False`` commits without waiting for the WAL flush: only for bookkeeping that
        records no change to the world (see the module doc)."""
        import psycopg

        tenant = _as_uuid(tenant_id) if tenant_id is not None else None
        begin: Statement = ("BEGIN READ ONLY" if read_only else "BEGIN", None)
        opener = [begin, self._settings(tenant, statement_timeout_ms, durable)]
        with self._borrowed("transaction") as conn:
            tx = Tx(conn, tenant, self.stats, opener)
            try:
                yield tx
            except BaseException:
                if not conn.closed and (
                    conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
                ):
                    self.stats.round_trips += 1
                    conn.execute("ROLLBACK")
                raise
            if tx.opened:
                self.stats.round_trips += 1
                conn.execute("COMMIT")

    def _once(
        self,
        tenant_id: uuid.UUID | str | None,
        name: str,
        params: Mapping[str, Any],
        durable: bool = True,
    ) -> tuple[list[Row], int]:
        """One named statement in its own transaction, in one round trip: the settings and
        the statement travel in one pipeline, whose sync commits them as one implicit
        transaction (so no BEGIN or COMMIT is needed)."""
        if "tenant_id" in params:
            raise InvalidRequest("tenant_id comes from the binding, not a caller")
        tenant = _as_uuid(tenant_id) if tenant_id is not None else None
        with self._borrowed(name) as conn:
            tx = Tx(conn, tenant, self.stats, [self._settings(tenant, None, durable)])
            return tx._send([(query(name), tx._bind(params))], label=name)

    def one(
        self,
        tenant_id: uuid.UUID | str | None,
        query_name: str,
        /,
        *,
        durable: bool = True,
        **params: Any,
    ) -> Row | None:
        """The first row of one named statement run in its own transaction (one round trip).

        ``durable=False``: committed without waiting for the WAL flush (see ``transaction``)."""
        rows, _ = self._once(tenant_id, query_name, params, durable)
        return rows[0] if rows else None

    def all(
        self, tenant_id: uuid.UUID | str | None, query_name: str, /, **params: Any
    ) -> list[Row]:
        """Every row of one named statement run in its own transaction (one round trip)."""
        return self._once(tenant_id, query_name, params)[0]

    def run(self, tenant_id: uuid.UUID | str | None, query_name: str, /, **params: Any) -> int:
        """Rows touched by one named statement in its own transaction (one round trip)."""
        return self._once(tenant_id, query_name, params)[1]

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Row]]:
        """A raw autocommit connection (schema changes, maintenance)."""
        with self._borrowed("connection") as conn:
            yield conn


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Each new connection reads and writes JSON with pydantic-core (several times faster than
    the json module), and writes UUIDs, datetimes and other values as strings."""
    from psycopg.types.json import set_json_dumps, set_json_loads
    from pydantic_core import from_json, to_json

    set_json_dumps(functools.partial(to_json, fallback=str), context=conn)
    set_json_loads(from_json, context=conn)


def _pool_errors() -> type[Exception]:
    from psycopg_pool import PoolTimeout

    return PoolTimeout


def _as_uuid(value: uuid.UUID | str) -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise InvalidRequest(f"not a tenant id: {value!r}", code="invalid_tenant") from None


_db: Database | None = None
_db_lock = threading.Lock()


def get_db() -> Database:
    """The process-wide database, created on first use from the settings."""
    global _db
    if _db is None:
        with _db_lock:
            if _db is None:
                from flowpilot.config import get_settings
                from flowpilot.db.connect import resolve_database_url

                settings = get_settings()
                _db = Database(
                    resolve_database_url(settings),
                    max_size=settings.db_pool_max,
                    prepare_threshold=settings.db_prepare_threshold,
                    connect_timeout=settings.db_connect_timeout,
                    statement_timeout_ms=settings.db_statement_timeout_ms,
                )
    return _db


def reset_db() -> None:
    """Close and forget the process-wide database (tests, settings changes)."""
    global _db
    with _db_lock:
        if _db is not None:
            _db.close()
        _db = None
