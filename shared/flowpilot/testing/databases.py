"""Real PostgreSQL for tests and benchmarks: a template built once from schema.sql, cloned.

With ``TEST_DATABASE_URL`` set, that server is used; otherwise an embedded one is started
from ``pgserver`` in a temporary folder and deleted at the end.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flowpilot.db import Database
from flowpilot.db.schema import apply_schema

TEMPLATE = "flowpilot_template"
_counter = itertools.count(1)


class TestPostgres:
    """One server for a test session: builds the template, hands out fresh clones."""

    __test__ = False  # not a pytest test class

    def __init__(self, admin_url: str, server: Any = None) -> None:
        self.admin_url = admin_url
        self._server = server

    @classmethod
    def start(cls) -> TestPostgres:
        url = os.environ.get("TEST_DATABASE_URL")
        if url:
            return cls(url)
        from flowpilot.local.embedded import _pgserver

        pgserver = _pgserver()
        folder = Path(tempfile.mkdtemp(prefix="fp-pg-")) / "pgdata"
        server = pgserver.get_server(folder, cleanup_mode="delete")
        return cls(server.get_uri(), server)

    def url_for(self, name: str) -> str:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params = conninfo_to_dict(self.admin_url)
        params["dbname"] = name
        return make_conninfo("", **params)

    def _admin(self, statement: str, name: str, template: str | None = None) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            query = sql.SQL(statement).format(
                name=sql.Identifier(name),
                template=sql.Identifier(template or TEMPLATE),
            )
            conn.execute(query)

    def build_template(self) -> None:
        self._admin("DROP DATABASE IF EXISTS {name} WITH (FORCE)", TEMPLATE)
        self._admin("CREATE DATABASE {name}", TEMPLATE)
        db = Database(self.url_for(TEMPLATE), max_size=1)
        try:
            apply_schema(db)
        finally:
            db.close()

    def create_clone(self) -> str:
        name = f"fp_test_{os.getpid()}_{next(_counter)}"
        self._admin("CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY", name)
        return name

    def create_empty(self) -> str:
        name = f"fp_empty_{os.getpid()}_{next(_counter)}"
        self._admin("CREATE DATABASE {name}", name)
        return name

    def drop(self, name: str) -> None:
        self._admin("DROP DATABASE IF EXISTS {name} WITH (FORCE)", name)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()

    @contextmanager
    def clone(self, **options: Any) -> Iterator[Database]:
        """A fresh database cloned from the template, dropped afterwards."""
        name = self.create_clone()
        db = Database(self.url_for(name), **options)
        try:
            yield db
        finally:
            db.close()
            self.drop(name)
