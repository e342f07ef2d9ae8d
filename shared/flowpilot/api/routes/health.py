"""``GET /health``: is the service up and can it reach its database."""

from __future__ import annotations

import time

from fastapi import APIRouter
from pydantic import BaseModel

from flowpilot import __version__
from flowpilot.db import get_db
from flowpilot.errors import FlowPilotError

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str
    version: str
    database: str
    database_ms: float | None = None


@router.get("/health", response_model=Health)
def health() -> Health:
    started = time.perf_counter()
    try:
        with get_db().transaction() as tx:
            tx.one("database_ping")
    except FlowPilotError as exc:
        return Health(status="degraded", version=__version__, database=exc.code)
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    return Health(status="ok", version=__version__, database="ok", database_ms=elapsed)
