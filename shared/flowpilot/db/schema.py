"""Applying ``schema.sql`` (idempotent) to a database."""

from __future__ import annotations

from pathlib import Path

from flowpilot.db.database import Database

# The repository's schema.sql is the truth; in a checkout (editable install) it sits three
# levels above this package.
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "schema.sql"

# Serialises concurrent migrations; transaction-scoped, so safe behind a pooler.
_MIGRATION_LOCK = 7_245_120_001


def schema_sql() -> str:
    return SCHEMA_PATH.read_text(encoding="utf-8")


def apply_schema(db: Database) -> None:
    """Apply schema.sql in one transaction; running it again changes nothing."""
    text = schema_sql()
    with db.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(text)
