"""``send_email``: through Amazon SES when a sender is configured, else only to the mailbox.

Every message is recorded in the ``mailbox`` table, so ``flowpilot mail`` shows what was
sent; ``provider_message_id`` is SES's id, or NULL for a message that never left (local).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from flowpilot.db import Database
from flowpilot.observability import logger
from flowpilot.skills.context import SkillContext, SkillFailed
from flowpilot.skills.handlers.internal import internal

_ADDRESS = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+$")


def list_mail(db: Database, tenant_id: uuid.UUID, limit: int = 50) -> list[dict[str, Any]]:
    """The tenant's latest mail, newest first."""
    return db.all(tenant_id, "mail_list", limit=max(1, min(int(limit), 1000)))


def send_via_ses(sender: str, recipient: str, subject: str, body: str) -> str:
    """Send one plain-text message with SES; returns SES's message id."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        response = boto3.client("ses").send_email(
            Source=sender,
            Destination={"ToAddresses": [recipient]},
            Message={
                "Subject": {"Data": subject, "Charset": "UTF-8"},
                "Body": {"Text": {"Data": body, "Charset": "UTF-8"}},
            },
        )
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise SkillFailed(
            f"the email was not sent: {error.get('Message') or error.get('Code') or exc}",
            code="email_rejected",
        ) from exc
    except BotoCoreError as exc:
        raise SkillFailed(
            f"the email service is unreachable: {exc}", code="email_unavailable"
        ) from exc
    return str(response["MessageId"])


@internal("send_email")
def send_email(ctx: SkillContext, arguments: dict[str, Any]) -> dict[str, Any]:
    recipient = str(arguments.get("to") or "").strip()
    if not _ADDRESS.match(recipient):
        raise SkillFailed(f"{recipient!r} is not an email address", code="invalid_recipient")
    # A line break in a subject would start a new header; one line is all a subject needs.
    subject = " ".join(str(arguments.get("subject") or "").split())
    body = str(arguments.get("body") or "")
    if not subject or not body.strip():
        raise SkillFailed("an email needs a subject and a body", code="empty_email")
    sender = ctx.settings.sender_email
    message_id = send_via_ses(sender, recipient, subject, body) if sender else None
    row = ctx.db.one(
        ctx.tenant_id,
        "mail_insert",
        recipient=recipient,
        subject=subject,
        body=body,
        provider_message_id=message_id,
    )
    assert row is not None
    delivered_via = "ses" if message_id else "mailbox"
    logger.info("email recorded", mail_id=row["mail_id"], delivered_via=delivered_via)
    return {
        "mail_id": row["mail_id"],
        "delivered_via": delivered_via,
        "provider_message_id": message_id,
    }
