"""``flowpilot mail [--tenant ID] [--limit N] [--json]``: what send_email sent or kept."""

from __future__ import annotations

import argparse
from typing import Any

from flowpilot.cli.output import emit
from flowpilot.cli.tenants import add_tenant_option, resolve_tenant


def register(sub: Any) -> None:
    mail = sub.add_parser("mail", help="show the mail FlowPilot sent (or kept locally)")
    add_tenant_option(mail)
    mail.add_argument("--limit", type=int, default=50, help="how many messages (default 50)")
    mail.add_argument("--json", action="store_true")
    mail.set_defaults(handler=_mail)


def _mail(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.skills.internal.email import list_mail

    db = get_db()
    tenant_id = resolve_tenant(db, args.tenant)
    messages = list_mail(db, tenant_id, limit=args.limit)
    emit(messages, as_json=args.json, human=_human)
    return 0


def _human(messages: list[dict[str, Any]]) -> str:
    if not messages:
        return "no mail"
    lines = []
    for mail in messages:
        via = f"SES {mail['provider_message_id']}" if mail["provider_message_id"] else "mailbox"
        lines.append(f"{mail['created_at']}  to {mail['recipient']}  [{via}]")
        lines.append(f"  {mail['subject']}")
        body = " ".join(mail["body"].split())
        lines.append(f"  {body[:200]}{'...' if len(body) > 200 else ''}")
    return "\n".join(lines)
