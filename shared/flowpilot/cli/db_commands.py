"""``flowpilot db migrate|url|stop``."""

from __future__ import annotations

import argparse
from typing import Any

from flowpilot.cli.output import emit


def register(sub: Any) -> None:
    db = sub.add_parser("db", help="the database: migrate, url, stop")
    actions = db.add_subparsers(dest="action", required=True, metavar="ACTION")

    migrate = actions.add_parser("migrate", help="apply schema.sql (idempotent)")
    migrate.add_argument("--json", action="store_true")
    migrate.set_defaults(handler=_migrate)

    url = actions.add_parser("url", help="print the database URL in use")
    url.add_argument("--json", action="store_true")
    url.set_defaults(handler=_url)

    stop = actions.add_parser("stop", help="stop the embedded PostgreSQL")
    stop.add_argument("--json", action="store_true")
    stop.set_defaults(handler=_stop)


def _migrate(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.db.schema import SCHEMA_PATH, apply_schema

    apply_schema(get_db())
    emit(
        {"migrated": True, "schema": str(SCHEMA_PATH)},
        as_json=args.json,
        human=lambda r: f"schema applied from {r['schema']}",
    )
    return 0


def _url(args: argparse.Namespace) -> int:
    from flowpilot.config import get_settings
    from flowpilot.db.connect import resolve_database_url

    url = resolve_database_url(get_settings())
    emit({"url": url}, as_json=args.json, human=lambda r: r["url"])
    return 0


def _stop(args: argparse.Namespace) -> int:
    from flowpilot.config import get_settings
    from flowpilot.local.embedded import stop_embedded

    stopped = stop_embedded(get_settings().data_dir)
    emit(
        {"stopped": stopped},
        as_json=args.json,
        human=lambda r: "embedded PostgreSQL stopped" if r["stopped"] else "it was not running",
    )
    return 0
