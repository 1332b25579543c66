"""Free loopback ports for test processes (tests never use the well-known ports).

A port the kernel picks (`bind(0)`) comes from the ephemeral range, which every outgoing
connection draws its source port from too: between a test choosing such a port and its
server binding it, a client connection elsewhere (Envoy to an upstream, an HTTP client)
may take it, and the server fails with "Address already in use". So ports are drawn below
the ephemeral range, checked free, and never handed out twice in one test run.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

from gw import defaults

#: Where ports are drawn from when the ephemeral range leaves room below it.
_LOWEST = 10000
#: gw's own default ports (a `gw up` started without port options may hold them).
_TAKEN_BY_DEFAULT = frozenset(
    value
    for name, value in vars(defaults).items()
    if name.endswith("_PORT") and isinstance(value, int)
)
_given: set[int] = set(_TAKEN_BY_DEFAULT)


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _kernel_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_port() -> int:
    high = _ephemeral_low() - 1
    if high - _LOWEST < 1000:  # no room below the ephemeral range: the kernel's choice
        return _kernel_port()
    if len(_given) > (high - _LOWEST) // 2:
        _given.clear()
        _given.update(_TAKEN_BY_DEFAULT)
    for _ in range(500):
        port = random.randint(_LOWEST, high)
        if port not in _given and _bindable(port):
            _given.add(port)
            return port
    return _kernel_port()


def free_ports(n: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < n:
        ports.add(free_port())
    return sorted(ports)
