"""`upgrades` on a route: which protocol upgrades (WebSocket, CONNECT) it allows."""

from __future__ import annotations

from gw.api.meta import Model


class ProtocolUpgradeSpec(Model):
    #: Unset: enabled.
    enabled: bool | None = None


class ProtocolUpgradeConfig(Model):
    """Exactly one of `websocket`, `connect` and `connectTerminate`."""

    websocket: ProtocolUpgradeSpec | None = None
    connect: ProtocolUpgradeSpec | None = None
    connect_terminate: ProtocolUpgradeSpec | None = None
