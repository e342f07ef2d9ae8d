"""Cold-start import cost of each Lambda handler, against importing the naive dependency set.

Every sample is a fresh interpreter that imports one thing and reports how long the import took,
so nothing is shared between samples but the OS file cache and ``__pycache__``; one untimed
warm-up round fills both for every target alike. Rounds are interleaved (naive set, then each
handler) so machine noise lands on both sides of each ratio.

The child also proves the import is inert: socket connects and ``create_connection`` raise and
are counted, and so do psycopg connects and pool opens (libpq does not go through Python's
``socket``, so the driver is patched the moment it is imported, without importing it early).

Run: ``.venv/bin/python bench/cold_start.py [--runs N] [--check]``.
One JSON line for the naive set, then one per function. ``--check`` exits 1 if any function
misses its ratio target, fails to import, or opens a connection while importing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = "cold_start"
MARKER = "__cold_start_result__ "
NAIVE_SET = (
    "openai",
    "fastapi",
    "boto3",
    "psycopg",
    "mangum",
    "pydantic",
    "aws_lambda_powertools",
)
HEAVY_MODULES = (
    "openai",
    "fastapi",
    "boto3",
    "botocore",
    "psycopg",
    "mangum",
    "pydantic",
    "jsonschema",
    "yaml",
    "httpx",
)
MIN_RUNS = 5
CHILD_TIMEOUT_S = 120.0

# Runs in the fresh interpreter: argv is ["-c", "file", <path>] or ["-c", "modules", <name>...].
# Only socket and importlib.util are loaded before the clock starts, identically for every target.
CHILD_CODE = """
import importlib.util
import socket
import sys
import time

attempts = []

def _blocked(kind, target=None):
    # Socket addresses are reported; conninfo strings are not, they can carry passwords.
    attempts.append(kind if target is None else kind + " " + repr(target))
    raise ConnectionRefusedError("cold_start bench: " + kind + " blocked while importing")

def _connect(self, address):
    _blocked("socket.connect", address)

def _connect_ex(self, address):
    _blocked("socket.connect_ex", address)

def _create_connection(address, *args, **kwargs):
    _blocked("socket.create_connection", address)

socket.socket.connect = _connect
socket.socket.connect_ex = _connect_ex
socket.create_connection = _create_connection

def _guard_psycopg(module):
    def connect(*args, **kwargs):
        _blocked("psycopg.connect")
    module.connect = connect
    for cls in (module.Connection, module.AsyncConnection):
        cls.connect = classmethod(lambda cls, *args, **kwargs: connect(*args, **kwargs))

def _guard_pool(module):
    def open_pool(self, *args, **kwargs):
        _blocked(type(self).__name__ + ".open")
    for name in ("ConnectionPool", "AsyncConnectionPool"):
        cls = getattr(module, name, None)
        if cls is not None:
            # _open is what both open() and the constructor's implicit open go through.
            setattr(cls, "_open" if hasattr(cls, "_open") else "open", open_pool)

_DB_GUARDS = {"psycopg": _guard_psycopg, "psycopg_pool": _guard_pool}

class _DatabaseGuard:
    # Patches the driver right after its first import, so the guard itself loads nothing.
    def find_spec(self, name, path=None, target=None):
        guard = _DB_GUARDS.get(name)
        if guard is None:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None and spec.loader is not None:
                exec_module = spec.loader.exec_module
                def exec_and_guard(module):
                    exec_module(module)
                    guard(module)
                spec.loader.exec_module = exec_and_guard
                return spec
        return None

sys.meta_path.insert(0, _DatabaseGuard())

mode, targets = sys.argv[1], sys.argv[2:]
error = None
start = time.perf_counter()
try:
    if mode == "file":
        spec = importlib.util.spec_from_file_location("app", targets[0])
        module = importlib.util.module_from_spec(spec)
        sys.modules["app"] = module  # the name Lambda's bootstrap gives it
        spec.loader.exec_module(module)
    else:
        for name in targets:
            __import__(name)
except BaseException as exc:
    error = exc
elapsed_ms = (time.perf_counter() - start) * 1000.0

import json
import traceback

result = {
    "ms": elapsed_ms,
    "attempts": attempts,
    "modules": sorted(name for name in sys.modules if "." not in name),
    "error": None,
}
if error is not None:
    result["error"] = "".join(traceback.format_exception(error)[-6:]).strip()
sys.stdout.flush()
print(%(marker)r + json.dumps(result), flush=True)
""".replace("%(marker)r", repr(MARKER))


@dataclass(frozen=True)
class Target:
    """One thing to import: a handler file (with its ratio target) or the naive module set."""

    function: str
    handler: Path | None = None
    ratio_target: float | None = None

    def argv(self) -> list[str]:
        if self.handler is None:
            return ["modules", *NAIVE_SET]
        return ["file", str(self.handler)]

    def cwd(self, home: Path) -> Path:
        # Lambda's task root is the working directory and sys.path[0]; `-c` puts cwd first too.
        return self.handler.parent if self.handler is not None else home


@dataclass
class Samples:
    times_ms: list[float] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)
    connections: int = 0
    heavy_modules: set[str] = field(default_factory=set)
    error: str | None = None

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.times_ms) if self.times_ms else None


NAIVE = Target("naive_set")
HANDLERS = (
    Target("ChatCompletionFunction", ROOT / "functions/chat_completion/app.py", 0.6),
    Target("AgentExecuteFunction", ROOT / "functions/agent_execute/app.py", 0.35),
    Target("HeartbeatFunction", ROOT / "functions/flowpilot_heartbeat/app.py", 0.35),
    Target("SignalPlannerFunction", ROOT / "functions/signal_planner/app.py", 0.35),
)


def child_env(home: Path) -> dict[str, str]:
    """The parent's environment minus every way to reach a database, with a throwaway home."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "DATABASE_URL" and not key.startswith("PG")  # libpq reads PGHOST and friends
    }
    env["FLOWPILOT_HOME"] = str(home)
    # Lambda always sets a region; without one, a client built at import fails instead of
    # showing up as the slow import it is.
    env.setdefault("AWS_REGION", "us-east-1")
    env.setdefault("AWS_DEFAULT_REGION", env["AWS_REGION"])
    return env


def import_once(target: Target) -> dict[str, Any]:
    """Import ``target`` in a fresh interpreter; the child's result, or an error describing it."""
    with tempfile.TemporaryDirectory(prefix="flowpilot-cold-start-") as tmp:
        home = Path(tmp)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", CHILD_CODE, *target.argv()],
                cwd=target.cwd(home),
                env=child_env(home),
                capture_output=True,
                text=True,
                timeout=CHILD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"import did not finish within {CHILD_TIMEOUT_S:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARKER):
            result: dict[str, Any] = json.loads(line[len(MARKER) :])
            return result
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-6:]
    return {"error": f"child exited {proc.returncode} without a result: " + "\n".join(tail)}


def record(samples: Samples, result: dict[str, Any], *, timed: bool) -> None:
    if result.get("error"):
        samples.error = str(result["error"])
    attempts = list(result.get("attempts", []))
    samples.connections = max(samples.connections, len(attempts))
    samples.attempts.extend(a for a in attempts if a not in samples.attempts)
    samples.heavy_modules.update(m for m in result.get("modules", []) if m in HEAVY_MODULES)
    if timed and samples.error is None:
        samples.times_ms.append(float(result["ms"]))


def measure(runs: int) -> dict[Target, Samples]:
    targets = (NAIVE, *HANDLERS)
    samples = {target: Samples() for target in targets}
    for round_no in range(runs + 1):  # round 0 is the untimed warm-up
        for target in targets:
            if samples[target].error is None:
                record(samples[target], import_once(target), timed=round_no > 0)
    return samples


def ordered_heavy(found: set[str]) -> list[str]:
    return [name for name in HEAVY_MODULES if name in found]


def ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def naive_line(naive: Samples, runs: int) -> dict[str, Any]:
    line: dict[str, Any] = {
        "bench": BENCH,
        "function": NAIVE.function,
        "modules": list(NAIVE_SET),
        "naive_set_ms": ms(naive.median_ms),
        "runs": runs,
        "connections": naive.connections,
        "heavy_modules": ordered_heavy(naive.heavy_modules),
    }
    if naive.error is not None:
        line["error"] = naive.error
    return line


def handler_line(target: Target, handler: Samples, naive: Samples, runs: int) -> dict[str, Any]:
    handler_ms, naive_ms = handler.median_ms, naive.median_ms
    ratio = handler_ms / naive_ms if handler_ms is not None and naive_ms else None
    ok = (
        ratio is not None
        and target.ratio_target is not None
        and ratio <= target.ratio_target
        and handler.connections == 0
    )
    line: dict[str, Any] = {
        "bench": BENCH,
        "function": target.function,
        "handler_ms": ms(handler_ms),
        "naive_set_ms": ms(naive_ms),
        "ratio": None if ratio is None else round(ratio, 3),
        "target": target.ratio_target,
        "ok": ok,
        "runs": runs,
        "connections": handler.connections,
        "heavy_modules": ordered_heavy(handler.heavy_modules),
    }
    if handler.attempts:
        line["connection_attempts"] = handler.attempts
    if handler.error is not None:
        line["error"] = handler.error
    return line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed imports per target (>= 5)")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if any function misses its target"
    )
    args = parser.parse_args(argv)
    if args.runs < MIN_RUNS:
        parser.error(f"--runs must be at least {MIN_RUNS}, got {args.runs}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    samples = measure(args.runs)
    naive = samples[NAIVE]
    print(json.dumps(naive_line(naive, args.runs)), flush=True)
    all_ok = True
    for target in HANDLERS:
        line = handler_line(target, samples[target], naive, args.runs)
        all_ok = all_ok and bool(line["ok"])
        print(json.dumps(line), flush=True)
    return 1 if args.check and not all_ok else 0


if __name__ == "__main__":
    sys.exit(main())
