"""Loading the real-shaped Lambda events kept in the repository's ``events/`` folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVENTS_DIR = Path(__file__).resolve().parents[3] / "events"


def load_event(name: str) -> Any:
    """The event ``events/<name>`` (``.json`` may be left off) as Python data."""
    path = EVENTS_DIR / (name if name.endswith(".json") else f"{name}.json")
    return json.loads(path.read_text(encoding="utf-8"))
