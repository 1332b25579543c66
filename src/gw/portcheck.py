"""`ListenersBound`: `gw up` is up only once its proxy listens on every port it was given.

Envoy binds a listener's port when the listener arrives over xDS; a port another process holds
makes it refuse the update (a NACK `cannot bind '127.0.0.1:8080': Address already in use`),
and it keeps serving nothing there. Left alone, `gw up` would print that it is up while no
request can reach it. This server starts (so `lifecycle.serve()` goes on) only when the
proxy has accepted its first listeners; a port clash makes it fail to start, which stops
everything and makes `gw up` exit non-zero with the port named; so does a proxy that exits
as it starts (its admin port taken: the reason is read from its log). Later clashes (a Gateway
edited to a taken port) are the Proxy's status, as every NACK is: the proxy keeps serving
what it has.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path

from gw.xds.server import AdsServer, TypeState

LDS = "type.googleapis.com/envoy.config.listener.v3.Listener"
_CANNOT_BIND = re.compile(r"cannot bind '([^']+)': ([^;\n`]+?)(?: initializing config|$|;)", re.M)


class PortTaken(Exception):
    """A port the proxy needs is held by another process."""


class ListenersBound:
    name = "listeners"

    def __init__(
        self,
        ads: AdsServer,
        role: str,
        *,
        log: Path,
        restarts: Callable[[], int],
        timeout: float = 60.0,
    ) -> None:
        self.ads = ads
        self.role = role
        #: Where the proxy logs: why it could not start, when it could not.
        self.log = log
        #: How often the proxy process was restarted: once is a failed start.
        self.restarts = restarts
        self.timeout = timeout

    async def start(self) -> None:
        """Return once the proxy accepted its first listeners; raise when it refused them for
        a taken port, or did not take them within `timeout` seconds."""
        deadline = time.monotonic() + self.timeout
        while (state := self._listeners()) is None or not _settled(state):
            if self.restarts() > 0:
                raise PortTaken(self._start_failure())
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the proxy did not take its listeners within {self.timeout:g}s; "
                    f"see its log, {self.log}"
                )
            await asyncio.sleep(0.05)
        if state.nack is not None:
            taken = _CANNOT_BIND.findall(state.nack.message)
            if taken:
                raise PortTaken(port_taken_message(taken))

    async def wait(self) -> None:
        await asyncio.Event().wait()  # nothing to run after the start: never ends by itself

    async def stop(self) -> None:
        return None

    def _start_failure(self) -> str:
        """Why the proxy exited before it took its listeners, from its log."""
        try:
            text = self.log.read_text(errors="replace")[-20000:]
        except OSError:
            text = ""
        taken = _CANNOT_BIND.findall(text.replace("`", ""))
        if taken:
            return port_taken_message(taken[-1:])
        return f"the proxy exited as it started; see its log, {self.log}"

    def _listeners(self) -> TypeState | None:
        for connection in list(self.ads.connections.values()):
            if connection.role == self.role and LDS in connection.types:
                return connection.types[LDS]
        return None


def _settled(state: TypeState) -> bool:
    """The proxy answered the listeners last sent: ACK or NACK."""
    sent, acked = state.versions(LDS)  # a delta stream's too
    if not sent:
        return False
    return acked == sent or (state.nack is not None and state.nack.version == sent)


def port_taken_message(taken: list[tuple[str, str]]) -> str:
    """`the proxy cannot listen on 127.0.0.1:8080 (Address already in use) ...`."""
    where = ", ".join(f"{address} ({reason.strip()})" for address, reason in taken)
    return (
        f"the proxy cannot listen on {where}: another process holds the port (another "
        "`gw up`?). Stop it, or choose free ports with --http-port/--https-port (or the "
        "Gateway's bindPort)"
    )
