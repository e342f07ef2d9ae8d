"""Fail any test that would open a connection outside this machine.

The guard patches ``socket.socket.connect``, ``socket.socket.connect_ex`` and
``socket.create_connection``. Loopback addresses, ``localhost`` and AF_UNIX sockets pass;
anything else raises :class:`ExternalNetworkBlocked` before a packet is sent. Hostnames are
judged by name, so a call to ``api.openai.com`` fails without a DNS lookup.

Code that resolves names itself before connecting (asyncio's ``create_connection``) still makes
that lookup; the connection that follows is blocked.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterator
from typing import Any

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})

_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex
_original_create_connection = socket.create_connection

_lock = threading.Lock()
_depth = 0


class ExternalNetworkBlocked(RuntimeError):
    """A test tried to reach a host outside this machine."""

    def __init__(self, host: str, port: Any = None) -> None:
        target = host if port is None else f"{host}:{port}"
        super().__init__(
            f"blocked a network connection to {target}: tests may only reach loopback "
            "(127.0.0.0/8, ::1, localhost); use the scripted model server instead"
        )
        self.host = host
        self.port = port


def is_loopback_host(host: str | bytes) -> bool:
    """Whether ``host`` names this machine, decided without DNS."""
    name = host.decode("idna") if isinstance(host, bytes) else host
    name = name.strip().strip("[]").rstrip(".").lower()
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # a hostname that is not a loopback name: refuse rather than resolve
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def _check(family: int, address: Any) -> None:
    if family == getattr(socket, "AF_UNIX", None):
        return
    if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) and address:
        host, port = address[0], address[1] if len(address) > 1 else None
        if isinstance(host, str | bytes) and is_loopback_host(host):
            return
        raise ExternalNetworkBlocked(str(host), port)
    raise ExternalNetworkBlocked(repr(address))


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self.family, address)
    _original_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self.family, address)
    return _original_connect_ex(self, address)


def _guarded_create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
    host, port = address[0], address[1]
    # Judged before create_connection resolves the name, so a blocked host costs no DNS query.
    if not is_loopback_host(host):
        raise ExternalNetworkBlocked(str(host), port)
    return _original_create_connection(address, *args, **kwargs)


def install_network_guard() -> None:
    """Block external connections until a matching :func:`uninstall_network_guard`."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            setattr(socket.socket, "connect", _guarded_connect)  # noqa: B010
            setattr(socket.socket, "connect_ex", _guarded_connect_ex)  # noqa: B010
            setattr(socket, "create_connection", _guarded_create_connection)  # noqa: B010


def uninstall_network_guard() -> None:
    """Undo one :func:`install_network_guard`; the last one restores the real socket calls."""
    global _depth
    with _lock:
        if _depth == 0:
            return
        _depth -= 1
        if _depth == 0:
            setattr(socket.socket, "connect", _original_connect)  # noqa: B010
            setattr(socket.socket, "connect_ex", _original_connect_ex)  # noqa: B010
            setattr(socket, "create_connection", _original_create_connection)  # noqa: B010


def network_guard_installed() -> bool:
    return _depth > 0


@contextlib.contextmanager
def block_external_network() -> Iterator[None]:
    """Within this block, any connection outside this machine raises ExternalNetworkBlocked."""
    install_network_guard()
    try:
        yield
    finally:
        uninstall_network_guard()
