"""A Gateway's `spec.options` (the established `ListenerOptions`): how the listener accepts
connections — socket options, per-connection buffers, the PROXY protocol, balancing of
connections across worker threads — and its access logs (`api/access_log.py`).
`connectionLimit` is here too: the established gateway puts it in `httpGateway.options` (and
`tcpGateway.options`), with this shape.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from gw.api.access_log import AccessLoggingService
from gw.api.duration import Duration
from gw.api.meta import Model, UInt32

Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class SocketOption(Model):
    """A `setsockopt` call on the listening socket (Envoy's `SocketOption`)."""

    description: str = ""
    level: Int64 = 0
    name: Int64 = 0
    int_value: Int64 | None = None
    #: Base64 of the bytes, as the orchestrator writes a protobuf `bytes` field.
    buf_value: str | None = None
    state: Literal["STATE_PREBIND", "STATE_BOUND", "STATE_LISTENING"] | None = None


class ProxyProtocolKeyValuePair(Model):
    metadata_namespace: str = ""
    key: str = ""


class ProxyProtocolRule(Model):
    tlv_type: Annotated[int, Field(ge=0, le=255)] = 0
    on_tlv_present: ProxyProtocolKeyValuePair | None = None


class ProxyProtocol(Model):
    rules: list[ProxyProtocolRule] = []
    allow_requests_without_proxy_protocol: bool = False


class ExactBalance(Model):
    pass


class ConnectionBalanceConfig(Model):
    exact_balance: ExactBalance | None = None


class ConnectionLimit(Model):
    max_active_connections: UInt32 | None = None
    delay_before_close: Duration | None = None


class ListenerOptions(Model):
    access_logging_service: AccessLoggingService | None = None
    listener_access_logging_service: AccessLoggingService | None = None
    # Parsed so that an established manifest loads and gets a status naming them (not built).
    extensions: dict[str, Any] | None = None
    tcp_stats: bool | None = None
    per_connection_buffer_limit_bytes: UInt32 | None = None
    socket_options: list[SocketOption] = []
    proxy_protocol: ProxyProtocol | None = None
    connection_balance_config: ConnectionBalanceConfig | None = None
