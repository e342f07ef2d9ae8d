"""Pytest fixtures for the scripted model server and the network guard.

Register them with ``from flowpilot.testing.fixtures import no_external_network,
scripted_model, scripted_model_server`` in a conftest. ``no_external_network`` is autouse
wherever it is imported.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flowpilot.testing.network_guard import block_external_network
from flowpilot.testing.scripted_model import ScriptedModelServer


@pytest.fixture(scope="session")
def scripted_model_server() -> Iterator[ScriptedModelServer]:
    """One scripted model server for the whole session."""
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def scripted_model(scripted_model_server: ScriptedModelServer) -> Iterator[ScriptedModelServer]:
    """The session's scripted model server with an empty queue and no recorded requests."""
    scripted_model_server.reset()
    yield scripted_model_server
    scripted_model_server.reset()


@pytest.fixture(autouse=True)
def no_external_network() -> Iterator[None]:
    """Fail the test if it opens a connection to anything but this machine."""
    with block_external_network():
        yield
