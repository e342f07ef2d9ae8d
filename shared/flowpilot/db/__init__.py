"""The database layer: one pool, named SQL, tenant-bound transactions.

Nothing here imports psycopg until a connection is first needed, so importing a handler
costs no driver load and opens no connection.
"""

from __future__ import annotations

from flowpilot.db.database import Database, get_db, reset_db
from flowpilot.db.transaction import Tx, as_json

__all__ = ["Database", "Tx", "as_json", "get_db", "reset_db"]
