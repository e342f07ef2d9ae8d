"""``flowpilot tenant create NAME``."""

from __future__ import annotations

import argparse
from typing import Any

from flowpilot.cli.output import emit


def register(sub: Any) -> None:
    tenant = sub.add_parser("tenant", help="tenants and their API keys")
    actions = tenant.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create a tenant; prints its API key once")
    create.add_argument("name")
    create.add_argument(
        "--module", action="append", default=[], help="enable a module (repeatable)"
    )
    create.add_argument("--json", action="store_true")
    create.set_defaults(handler=_create)


def _create(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.tenancy import create_tenant

    tenant = create_tenant(get_db(), args.name, modules=tuple(args.module))
    emit(
        {"tenant_id": str(tenant.tenant_id), "api_key": tenant.api_key},
        as_json=args.json,
        human=lambda r: (
            f"tenant {r['tenant_id']} created\nAPI key (shown once, keep it safe): {r['api_key']}"
        ),
    )
    return 0
