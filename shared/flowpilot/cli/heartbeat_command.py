"""``flowpilot heartbeat``: run one heartbeat tick now, for one tenant or every due tenant."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from typing import Any

from flowpilot.errors import InvalidRequest

REPORT_FIELDS = ("tenant_id", "outcome", "model_calls", "tokens", "objective_id", "skill", "reason")


def register(sub: Any) -> None:
    heartbeat = sub.add_parser(
        "heartbeat", help="tick now: the tenant given, or every tenant with due work"
    )
    heartbeat.add_argument("--tenant", help="tick only this tenant")
    heartbeat.add_argument("--json", action="store_true", help="one JSON object per line")
    heartbeat.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from flowpilot.db import get_db
    from flowpilot.heartbeat.scheduler import run_heartbeat

    tenant = _tenant_id(args.tenant) if args.tenant else None
    reports = [report.to_dict() for report in run_heartbeat(get_db(), tenant_id=tenant)]
    for report in reports:
        line = {key: report.get(key) for key in REPORT_FIELDS}
        sys.stdout.write((json.dumps(line) if args.json else _human(line)) + "\n")
    if not reports and not args.json:
        sys.stdout.write("no tenant has due work\n")
    return 1 if any(r["outcome"] == "failed" for r in reports) else 0


def _tenant_id(given: str) -> uuid.UUID:
    try:
        return uuid.UUID(given)
    except ValueError:
        raise InvalidRequest(f"not a tenant id: {given!r}", code="invalid_tenant") from None


def _human(report: dict[str, Any]) -> str:
    text = f"{report['tenant_id']}  {report['outcome']}"
    if report["skill"]:
        text += f"  skill {report['skill']}"
    if report["model_calls"] or report["tokens"]:
        text += f"  ({report['model_calls']} model calls, {report['tokens']} tokens)"
    return text + (f"  {report['reason']}" if report["reason"] else "")
