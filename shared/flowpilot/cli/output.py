"""How commands print: JSON for scripts (``--json``), short lines for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def emit(value: Any, *, as_json: bool, human: Callable[[Any], str] | None = None) -> None:
    if as_json or human is None:
        sys.stdout.write(json.dumps(value, default=str, indent=None if as_json else 2) + "\n")
    else:
        sys.stdout.write(human(value).rstrip("\n") + "\n")


def fail(code: str, message: str) -> None:
    sys.stderr.write(f"error [{code}]: {message}\n")
