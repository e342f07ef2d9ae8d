"""Which tenant a command acts for: ``--tenant ID``, or the only tenant there is."""

from __future__ import annotations

import argparse
import uuid

from flowpilot.db import Database
from flowpilot.errors import InvalidRequest, NotFound


def add_tenant_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tenant", help="tenant id (optional when there is only one tenant)")


def resolve_tenant(db: Database, given: str | None) -> uuid.UUID:
    if given:
        try:
            return uuid.UUID(given)
        except ValueError:
            raise InvalidRequest(f"not a tenant id: {given!r}", code="invalid_tenant") from None
    tenants = db.all(None, "tenant_ids_sample")
    if not tenants:
        raise NotFound(
            "there are no tenants yet: run `flowpilot tenant create NAME`", code="no_tenant"
        )
    if len(tenants) > 1:
        raise InvalidRequest(
            "there is more than one tenant: pass --tenant ID", code="tenant_needed"
        )
    return uuid.UUID(str(tenants[0]["tenant_id"]))
