"""``flowpilot up``: the whole stack on one machine.

The two HTTP functions on one port, the heartbeat on an interval and the outbox relay as
the local signal worker: the same handler code that runs in Lambda.
"""

from __future__ import annotations

import argparse
import threading
from typing import Any

from flowpilot.observability import logger


def register(sub: Any) -> None:
    up = sub.add_parser("up", help="serve the API, run the heartbeat and the signal worker")
    up.add_argument("--host", default=None, help="default 127.0.0.1 (FLOWPILOT_HOST)")
    up.add_argument("--port", type=int, default=None, help="default 8000 (FLOWPILOT_PORT)")
    up.add_argument(
        "--heartbeat-interval",
        type=float,
        default=None,
        help="seconds between heartbeats (FLOWPILOT_HEARTBEAT_INTERVAL, default 60)",
    )
    up.add_argument("--no-heartbeat", action="store_true", help="serve the API only")
    up.set_defaults(handler=_up)


def _background(stop: threading.Event, interval: float) -> None:
    from flowpilot.db import get_db
    from flowpilot.heartbeat.scheduler import run_heartbeat
    from flowpilot.signals.queue import relay_outbox

    while not stop.wait(interval):
        try:
            relay_outbox(get_db(), min_age_s=0)
            for report in run_heartbeat(get_db()):
                logger.info("local heartbeat", outcome=report.outcome, tenant=str(report.tenant_id))
        except Exception:
            logger.exception("local heartbeat failed; trying again next interval")


def _up(args: argparse.Namespace) -> int:
    import uvicorn

    from flowpilot.api.app import create_local_app
    from flowpilot.config import get_settings
    from flowpilot.db import get_db
    from flowpilot.db.schema import apply_schema

    settings = get_settings()
    apply_schema(get_db())
    stop = threading.Event()
    if not args.no_heartbeat:
        interval = args.heartbeat_interval or settings.heartbeat_interval_s
        threading.Thread(target=_background, args=(stop, interval), daemon=True).start()
    host = args.host or settings.host
    port = args.port or settings.port
    print(f"FlowPilot is up: http://{host}:{port}  (API docs at /docs, health at /health)")
    try:
        uvicorn.run(create_local_app(), host=host, port=port, log_level="warning")
    finally:
        stop.set()
    return 0
