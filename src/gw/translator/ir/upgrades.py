"""Protocol upgrades a route allows or refuses (WebSocket, CONNECT)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class Upgrade:
    kind: Literal["websocket", "CONNECT"]
    #: None: as the listener says (Envoy enables it).
    enabled: bool | None = None
    #: CONNECT only: Envoy ends the CONNECT and sends the payload to the upstream as TCP.
    terminate: bool = False
