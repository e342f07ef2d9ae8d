"""Entry point of the ``flowpilot`` command: one sub-command module per concern."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from flowpilot.cli import (
    approvals_commands,
    automations_command,
    chat_command,
    db_commands,
    heartbeat_command,
    invoke_command,
    mail_command,
    objectives_command,
    seed_command,
    skills_commands,
    soul_command,
    tenant_commands,
    up_command,
)
from flowpilot.cli.output import fail
from flowpilot.errors import FlowPilotError

COMMANDS = (
    db_commands,
    tenant_commands,
    skills_commands,
    approvals_commands,
    objectives_command,
    seed_command,
    soul_command,
    heartbeat_command,
    automations_command,
    chat_command,
    mail_command,
    invoke_command,
    up_command,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flowpilot", description="FlowPilot: an autonomous business operator."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except FlowPilotError as exc:
        fail(exc.code, exc.message)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
