"""The same one-tool ReAct turn, FlowPilot's engine against LangGraph, in one run.

LangGraph side: a StateGraph (agent node -> ToolNode -> agent, routed by tools_condition) with
one tool, ``get_briefing``, that runs FlowPilot's own ``build_briefing``; the model is
``langchain_openai.ChatOpenAI``; state is checkpointed by ``PostgresSaver`` into the same
PostgreSQL database (one psycopg connection: autocommit, prepare_threshold=0, dict_row). Both
sides talk to the same scripted model server (a tool call, then the answer) and every turn
starts a fresh thread.

Timing: N turns each after a warm-up, interleaved and alternating which side goes first; the
ratio of the two medians is the figure, and the median of the per-pair ratios is printed beside
it (each pair ran back to back, so it is the least disturbed by a noisy machine).

Round trips, counted in a separate pass so the timed pass stays unwrapped:
  - FlowPilot: ``db.stats.round_trips`` (its own count).
  - LangGraph: client side, by wrapping psycopg on the checkpointer's connection: a
    non-pipelined execute is one round trip; in a pipeline, each sync (``Pipeline.sync()`` and
    leaving the pipeline, which also syncs) is one, however many statements it carries. The
    tool's own queries go through FlowPilot's Database and are counted by its stats.
  - Both, on the wire: a Unix-socket proxy in front of PostgreSQL counts each time the server
    starts answering after the client has sent something (the same ruler for both sides).

Run: ``.venv/bin/python bench/vs_langgraph.py [--turns N]`` (needs ``pip install -e '.[bench]'``).
One JSON line per figure. Targets: FlowPilot at most half of LangGraph's median time, with
fewer round trips.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from turn import (
    FINAL,
    QUESTION,
    BoundExecutor,
    bench_stack,
    emit,
    flowpilot_turn,
    measure_phases,
    median_ms,
    settle,
)

from flowpilot.db import Database
from flowpilot.reasoning.bootstrap import PREAMBLE, tool_definition
from flowpilot.skills.internal.briefing import build_briefing
from flowpilot.testing import scripted_model
from flowpilot.testing.scripted_model import ScriptedModelServer

BENCH = "vs_langgraph"
WARMUP = 10
COUNT_TURNS = 20
TIME_TARGET = 0.5


# -- the LangGraph agent -----------------------------------------------------------------------


@dataclass
class LangGraphAgent:
    app: Any
    conn: Any  # the checkpointer's psycopg connection

    def turn(self, server: ScriptedModelServer) -> None:
        server.queue(
            scripted_model.tool_call("get_briefing", {}), scripted_model.text(FINAL["answer"])
        )
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        state = self.app.invoke({"messages": [("user", QUESTION)]}, config)
        kinds = [message.type for message in state["messages"]]
        if kinds != ["system", "human", "ai", "tool", "ai"] or server.pending:
            raise SystemExit(f"LangGraph turn did not run as scripted: {kinds}")

    def close(self) -> None:
        self.conn.close()


def langgraph_agent(
    server: ScriptedModelServer, db: Database, tenant_id: uuid.UUID, url: str
) -> LangGraphAgent:
    """A minimal ReAct graph: the leanest LangGraph shape for one tool call and an answer."""
    import psycopg
    from langchain_core.messages import SystemMessage
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from psycopg.rows import dict_row

    row = db.one(tenant_id, "skill_get", name="get_briefing")
    assert row is not None

    def get_briefing() -> dict[str, Any]:
        return build_briefing(db, tenant_id)

    # Same name and description the engine offers, so both models see the same tool.
    tool = StructuredTool.from_function(
        get_briefing,
        name="get_briefing",
        description=tool_definition(row)["function"]["description"],
    )
    model = ChatOpenAI(base_url=server.base_url, api_key="test", model="gpt-4o-mini")
    bound = model.bind_tools([tool])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([tool]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")

    conn = psycopg.Connection.connect(
        url, autocommit=True, prepare_threshold=0, row_factory=dict_row
    )
    saver = PostgresSaver(conn)
    saver.setup()
    # The engine sends a system prompt too; the graph gets the same preamble.
    app = _Prompted(graph.compile(checkpointer=saver), SystemMessage(PREAMBLE))
    return LangGraphAgent(app, conn)


@dataclass
class _Prompted:
    app: Any
    system: Any

    def invoke(self, state: dict[str, Any], config: dict[str, Any]) -> Any:
        return self.app.invoke({"messages": [self.system, *state["messages"]]}, config)


# -- round-trip counters -----------------------------------------------------------------------


@dataclass
class ClientTrips:
    """Round trips psycopg makes on the tracked connections, counted at the driver's calls."""

    tracked: set[int] = field(default_factory=set)
    count: int = 0

    def owns(self, conn: Any) -> bool:
        return id(conn) in self.tracked

    @contextmanager
    def installed(self) -> Iterator[ClientTrips]:
        import psycopg

        cursor_execute = psycopg.Cursor.execute
        pipeline_sync = psycopg.Pipeline.sync
        pipeline_enter = psycopg.Pipeline.__enter__
        pipeline_exit = psycopg.Pipeline.__exit__
        counter = self

        def execute(cur: Any, *args: Any, **kwargs: Any) -> Any:
            # Connection.execute goes through here too; executemany opens its own pipeline.
            if counter.owns(cur.connection) and cur.connection._pipeline is None:
                counter.count += 1
            return cursor_execute(cur, *args, **kwargs)

        def sync(pipe: Any) -> None:
            if counter.owns(pipe._conn):
                counter.count += 1
            pipeline_sync(pipe)

        def enter(pipe: Any) -> Any:
            # Entering a nested pipeline with commands pending syncs first.
            if counter.owns(pipe._conn) and pipe.level > 0 and pipe.command_queue:
                counter.count += 1
            return pipeline_enter(pipe)

        def exit_(pipe: Any, *exc: Any) -> None:
            if counter.owns(pipe._conn):
                counter.count += 1  # leaving a pipeline sends a Sync and waits for it
            pipeline_exit(pipe, *exc)

        patches: list[tuple[Any, str, Callable[..., Any]]] = [
            (psycopg.Cursor, "execute", execute),
            (psycopg.Pipeline, "sync", sync),
            (psycopg.Pipeline, "__enter__", enter),
            (psycopg.Pipeline, "__exit__", exit_),
        ]
        originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
        for owner, name, wrapper in patches:
            setattr(owner, name, wrapper)
        try:
            yield self
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)


class WireCounter:
    """A Unix-socket proxy in front of PostgreSQL that counts round trips on the wire: one each
    time the server starts answering after the client has sent something."""

    def __init__(self, upstream: str | tuple[str, int]) -> None:
        self.upstream = upstream
        self.folder = tempfile.mkdtemp(prefix="fp-wire-")
        self.port = 5432
        self.count = 0
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None

    @classmethod
    def in_front_of(cls, url: str) -> WireCounter:
        from psycopg.conninfo import conninfo_to_dict

        params = conninfo_to_dict(url)
        host = str(params.get("host") or "/tmp")
        port = int(params.get("port") or 5432)
        if host.startswith("/"):
            return cls(os.path.join(host, f".s.PGSQL.{port}"))
        return cls((host, port))

    def url_for(self, url: str) -> str:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params = conninfo_to_dict(url)
        params.update(host=self.folder, port=str(self.port))
        params.pop("sslmode", None)
        return make_conninfo("", **params)

    def start(self) -> WireCounter:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(os.path.join(self.folder, f".s.PGSQL.{self.port}"))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, daemon=True, name="wire-counter").start()
        return self

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            family = socket.AF_UNIX if isinstance(self.upstream, str) else socket.AF_INET
            server = socket.socket(family, socket.SOCK_STREAM)
            server.connect(self.upstream)
            spoke = threading.Event()  # the client sent something since the server last spoke
            for source, sink, from_client in ((client, server, True), (server, client, False)):
                threading.Thread(
                    target=self._pump, args=(source, sink, spoke, from_client), daemon=True
                ).start()

    def _pump(
        self, source: socket.socket, sink: socket.socket, spoke: threading.Event, from_client: bool
    ) -> None:
        try:
            while data := source.recv(65536):
                if from_client:
                    spoke.set()  # before forwarding, so the answer cannot overtake it
                elif spoke.is_set():
                    spoke.clear()
                    with self._lock:
                        self.count += 1
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


# -- the measurements --------------------------------------------------------------------------


def measure_time(
    server: ScriptedModelServer,
    db: Database,
    tenant_id: uuid.UUID,
    agent: LangGraphAgent,
    turns: int,
) -> dict[str, Any]:
    executor = BoundExecutor(db)
    for _ in range(WARMUP):
        flowpilot_turn(server, db, tenant_id, executor)
        agent.turn(server)
    settle(db)
    ours: list[float] = []
    theirs: list[float] = []

    def timed(run: Callable[[], object], into: list[float]) -> None:
        started = time.perf_counter()
        run()
        into.append(time.perf_counter() - started)

    for i in range(turns):
        sides = [
            (lambda: flowpilot_turn(server, db, tenant_id, executor), ours),
            (lambda: agent.turn(server), theirs),
        ]
        for run, into in sides if i % 2 == 0 else reversed(sides):
            timed(run, into)
    ratio = statistics.median(ours) / statistics.median(theirs)
    # Each pair ran back to back, so its ratio is the least disturbed by a noisy machine.
    paired = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
    return {
        "bench": BENCH,
        "figure": "median_ms",
        "flowpilot": median_ms(ours),
        "langgraph": median_ms(theirs),
        "ratio": round(ratio, 3),
        "paired_ratio_median": round(paired, 3),
        "turns": turns,
        "target": TIME_TARGET,
        "ok": ratio <= TIME_TARGET,
    }


def measure_round_trips(
    server: ScriptedModelServer, db: Database, tenant_id: uuid.UUID
) -> dict[str, Any]:
    """Both sides again, on connections that run through the wire counter."""
    wire = WireCounter.in_front_of(db.url).start()
    wired_db = Database(wire.url_for(db.url))
    agent = langgraph_agent(server, wired_db, tenant_id, wire.url_for(db.url))
    executor = BoundExecutor(wired_db)
    counter = ClientTrips(tracked={id(agent.conn)})
    ours: list[int] = []
    ours_wire: list[int] = []
    theirs: list[int] = []
    theirs_tool: list[int] = []
    theirs_wire: list[int] = []
    try:
        with counter.installed():
            for i in range(WARMUP + COUNT_TURNS):
                before, on_wire = wired_db.stats.round_trips, wire.count
                flowpilot_turn(server, wired_db, tenant_id, executor)
                if i >= WARMUP:
                    ours.append(wired_db.stats.round_trips - before)
                    ours_wire.append(wire.count - on_wire)
                before, tool, on_wire = counter.count, wired_db.stats.round_trips, wire.count
                agent.turn(server)
                if i >= WARMUP:
                    theirs.append(counter.count - before)
                    theirs_tool.append(wired_db.stats.round_trips - tool)
                    theirs_wire.append(wire.count - on_wire)
    finally:
        agent.close()
        wired_db.close()
        wire.stop()
    checkpointer = statistics.median(theirs)
    tool = statistics.median(theirs_tool)
    return {
        "bench": BENCH,
        "figure": "round_trips",
        "flowpilot": statistics.median(ours),
        "langgraph": checkpointer + tool,
        "langgraph_checkpointer": checkpointer,
        "langgraph_tool": tool,
        "wire_flowpilot": statistics.median(ours_wire),
        "wire_langgraph": statistics.median(theirs_wire),
        "turns": COUNT_TURNS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()

    with bench_stack() as (server, db, tenant_id):
        agent = langgraph_agent(server, db, tenant_id, db.url)
        try:
            timing = measure_time(server, db, tenant_id, agent, args.turns)
            emit(timing)
        finally:
            agent.close()
        emit(measure_round_trips(server, db, tenant_id))
        if not timing["ok"]:  # where FlowPilot's turn spends its time
            emit({**measure_phases(server, db, tenant_id, 30, profile=False), "bench": BENCH})


if __name__ == "__main__":
    main()
