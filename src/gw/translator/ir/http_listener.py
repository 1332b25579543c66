"""What a listener's own HTTP options (a Gateway's `httpGateway.options`) put on its filter
chain: a health check answered by the proxy, gRPC-Web, response compression, a
gateway-wide token bucket, sticky sessions, gRPC-JSON transcoding, the router's settings, and
extauth and rate-limit server settings that override the Settings' for this listener.
`HttpSettings` (`hcm.py`) is how the listener speaks HTTP; this is what it does with it."""

from __future__ import annotations

from dataclasses import dataclass, field

from gw.translator.ir.extauth import ExtAuthServer
from gw.translator.ir.grpc_json import GrpcJsonTranscoder
from gw.translator.ir.gzip import Gzip
from gw.translator.ir.listener_health import ListenerHealthCheck
from gw.translator.ir.ratelimit import LocalLimit, RateLimitServer
from gw.translator.ir.stateful_session import StatefulSession


@dataclass(frozen=True, slots=True, kw_only=True)
class ListenerLocalRateLimit:
    """`httpLocalRatelimit`: `bucket` (`defaultLimit`) is shared by every request on the
    listener that no virtual host or route limits with its own; `per_connection` gives each
    connection its own bucket; `x_ratelimit_headers` adds the `x-ratelimit-*` headers."""

    bucket: LocalLimit | None = None
    per_connection: bool = False
    x_ratelimit_headers: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RouterSettings:
    """`router`: `suppress_envoy_headers` drops the `x-envoy-*` headers Envoy adds to
    upstream requests and to responses; `dynamic_stats` (Envoy's default: on) keeps per
    cluster statistics of timing and canaries."""

    suppress_envoy_headers: bool = False
    dynamic_stats: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpListenerOptions:
    """Unset fields put nothing on the chain; gRPC-Web is on unless switched off, as in the
    established gateway."""

    health_check: ListenerHealthCheck | None = None
    grpc_web: bool = True
    gzip: Gzip | None = None
    local_ratelimit: ListenerLocalRateLimit | None = None
    stateful_session: StatefulSession | None = None
    router: RouterSettings = field(default_factory=RouterSettings)
    grpc_json: GrpcJsonTranscoder | None = None
    #: The extauth and rate-limit servers of this listener, over the Settings' ones.
    extauth_server: ExtAuthServer | None = None
    ratelimit_server: RateLimitServer | None = None
