"""`passThroughAuth`: ask an authorization service of the user's, over gRPC (Envoy's own
`Authorization/Check`, with the request Envoy sent) or over HTTP (a POST to `url`), and let
its answer decide. The chain's state goes along (gRPC: always, in the request's filter
metadata under `STATE_NAMESPACE`; HTTP: with `pass_through_state`) and may come back
changed. `failure_mode_allow` lets requests pass when the service cannot be reached, times
out or fails (5xx), instead of denying them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Filter metadata namespaces of a gRPC passthrough request (and its answer): the chain's
#: state, and the step's `config`.
STATE_NAMESPACE = "vendor.auth.passthrough"
CONFIG_NAMESPACE = "vendor.auth.passthrough.config"


@dataclass(frozen=True, slots=True, kw_only=True)
class PassThroughGrpc:
    address: str  # host:port
    connection_timeout_ms: int = 5000
    #: Further attempts after a failed call (the service unavailable), with exponential
    #: back-off from `retry_base_ms` up to `retry_max_ms`.
    retries: int = 0
    retry_base_ms: int = 1000
    retry_max_ms: int = 10_000


@dataclass(frozen=True, slots=True, kw_only=True)
class PassThroughHttp:
    url: str
    connection_timeout_ms: int = 5000
    #: 0: only `connection_timeout_ms` applies.
    response_header_timeout_ms: int = 0
    max_conns: int = 100
    #: 0: idle connections stay open.
    idle_timeout_ms: int = 0
    # request
    allowed_headers: tuple[str, ...] = ()
    headers_to_add: tuple[tuple[str, str], ...] = ()
    pass_through_state: bool = False
    pass_through_filter_metadata: bool = False
    pass_through_body: bool = False
    # response
    allowed_upstream_headers: tuple[str, ...] = ()
    allowed_upstream_headers_to_overwrite: tuple[str, ...] = ()
    allowed_client_headers_on_denied: tuple[str, ...] = ()
    allowed_client_headers_on_success: tuple[str, ...] = ()
    read_state_from_response: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PassThroughAuth:
    kind: Literal["pass_through"] = "pass_through"
    grpc: PassThroughGrpc | None = None
    http: PassThroughHttp | None = None
    #: `config` (a JSON object) passed along with every request; "" when not set.
    config_json: str = ""
    failure_mode_allow: bool = False
