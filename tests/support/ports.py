"""Free loopback ports for test processes (tests never use the well-known ports).

A port the kernel picks (`bind(0)`) comes from the ephemeral range, which every outgoing
connection draws its source port from too: between a test choosing such a port and its
server binding it, a client connection elsewhere (Envoy to an upstream, an HTTP client)
may take it, and the server fails with "Address already in use". So ports are drawn below
the ephemeral range, checked free, and never handed out twice in one test run. When the run
is split over several pytest-xdist workers, each worker draws from its own slice of that
range, so two workers never hand out the same port either.
"""

from __future__ import annotations

import os
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


def _worker_slice(low: int, high: int) -> tuple[int, int]:
    """This worker's share of [low, high]: all of it without pytest-xdist, else one of
    PYTEST_XDIST_WORKER_COUNT equal slices picked by the worker's number (gw0, gw1, ...)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return low, high
    index = int(worker[2:]) % count
    size = (high - low + 1) // count
    return low + index * size, low + (index + 1) * size - 1


def free_port() -> int:
    low, high = _worker_slice(_LOWEST, _ephemeral_low() - 1)
    if high - low < 1000:  # no room below the ephemeral range: the kernel's choice
        return _kernel_port()
    if len(_given) > (high - low) // 2:
        _given.clear()
        _given.update(_TAKEN_BY_DEFAULT)
    for _ in range(500):
        port = random.randint(low, high)
        if port not in _given and _bindable(port):
            _given.add(port)
            return port
    return _kernel_port()


def free_ports(n: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < n:
        ports.add(free_port())
    return sorted(ports)
