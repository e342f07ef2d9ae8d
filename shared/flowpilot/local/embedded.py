"""The embedded PostgreSQL: started from the ``pgserver`` package under a data folder.

Used when no ``DATABASE_URL`` is set (the local default) and by the test suite. The server
keeps running after the process that started it exits, so the next command finds it at
once; ``flowpilot db stop`` stops it.
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any

from flowpilot.errors import ConfigError

DATABASE = "flowpilot"

_lock = threading.Lock()
_servers: dict[Path, Any] = {}


def _pgserver() -> Any:
    # pgserver asks platformdirs for a runtime folder, which warns when XDG_RUNTIME_DIR is
    # unset (as in containers and CI); the fallback it takes is fine.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pgserver
        import pgserver.postgres_server as server_module

        server_module.PostgresServer.runtime_path  # noqa: B018 - evaluated at import
    return pgserver


def start_server(data_dir: Path, *, cleanup: str | None = None) -> Any:
    """Start (or reuse) the PostgreSQL server whose files are under ``data_dir``."""
    try:
        pgserver = _pgserver()
    except ImportError:  # pragma: no cover - the local extra is missing
        raise ConfigError(
            "DATABASE_URL is not set and the embedded PostgreSQL is not installed: "
            "install the 'local' extra (pip install -e '.[local]') or set DATABASE_URL"
        ) from None
    data_dir = data_dir.expanduser().resolve()
    with _lock:
        server = _servers.get(data_dir)
        if server is None:
            data_dir.mkdir(parents=True, exist_ok=True)
            server = pgserver.get_server(data_dir, cleanup_mode=cleanup)
            _servers[data_dir] = server
        return server


def ensure_database(server: Any, name: str) -> str:
    """Create database ``name`` on the server if missing; return its URL."""
    import psycopg

    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            from psycopg import sql

            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return str(server.get_uri(name))


def ensure_embedded(data_dir: Path) -> str:
    """URL of the local FlowPilot database, starting the server if needed."""
    return ensure_database(start_server(data_dir), DATABASE)


def stop_embedded(data_dir: Path) -> bool:
    """Stop the embedded server under ``data_dir``; False when none was running."""
    pgserver = _pgserver()
    data_dir = data_dir.expanduser().resolve()
    if not (data_dir / "postmaster.pid").exists():
        return False
    with _lock:
        _servers.pop(data_dir, None)
    pgserver.get_server(data_dir, cleanup_mode="stop").cleanup()
    return True
