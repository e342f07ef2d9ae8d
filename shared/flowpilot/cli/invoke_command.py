"""``flowpilot invoke LogicalId [--event FILE]``: a docker-free ``sam local invoke``."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from flowpilot.cli.output import fail


def register(sub: Any) -> None:
    invoke = sub.add_parser(
        "invoke", help="run a function of template.yaml in-process with an event"
    )
    invoke.add_argument("logical_id", help="e.g. ChatCompletionFunction")
    invoke.add_argument("--event", "-e", type=Path, help="event JSON file (default: {})")
    invoke.add_argument("--template", "-t", type=Path, default=Path("template.yaml"))
    invoke.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="override a variable"
    )
    invoke.set_defaults(handler=_invoke)


def _invoke(args: argparse.Namespace) -> int:
    from flowpilot.local.invoke import invoke_function

    event: Any = {}
    if args.event is not None:
        try:
            event = json.loads(args.event.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            fail("invalid_event_file", f"{args.event}: {exc}")
            return 1
    overrides = dict(item.split("=", 1) for item in args.env if "=" in item)
    try:
        result = invoke_function(
            args.logical_id, event, template_path=args.template, env_overrides=overrides
        )
    except Exception as exc:
        # The handler raised: show it like the Lambda runtime would, exit 1.
        traceback.print_exception(exc, file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(result, default=str) + "\n")
    return 0
