"""The HTTP filter chain: one module per Envoy filter, in the order requests meet them.

Each entry implements `HttpFilter`. Position in `HTTP_FILTERS` is the order (SPEC.md's
order of checks: JWT, then RBAC, then the rest, router last; JWT in two stages around
external auth): no numbers, no registration at
import time. A filter is put on a listener only when some virtual host there uses it, or
the listener's own options (`ir.Listener.plugins`) ask for it: such a filter is also
`listener_filter.ListenerConfigured`, and the listener asks it `for_listener`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from envoy.extensions.filters.http.router.v3 import router_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import wrappers_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import extproc, names, transform, transform_script
from gw.translator.envoy.aws import AwsLambdaFilter
from gw.translator.envoy.buffer import BufferFilter
from gw.translator.envoy.cors import CorsFilter
from gw.translator.envoy.csrf import CsrfFilter
from gw.translator.envoy.dynamicforwardproxy import DynamicForwardProxyFilter
from gw.translator.envoy.extauth import ExtAuthz, ExtAuthzHttp
from gw.translator.envoy.extauth_pass import ExtAuthzFallback, SessionPassFilter
from gw.translator.envoy.faults import FaultFilter
from gw.translator.envoy.gcp import GcpAuthnFilter
from gw.translator.envoy.grpc_json import GrpcJsonFilter
from gw.translator.envoy.grpc_web import GrpcWebFilter
from gw.translator.envoy.gzip import GzipFilter
from gw.translator.envoy.jwt import JwtFilter
from gw.translator.envoy.listener_health import ListenerHealthCheckFilter
from gw.translator.envoy.packing import pack
from gw.translator.envoy.ratelimit import GlobalRateLimitFilter, LocalRateLimitFilter
from gw.translator.envoy.rbac import RbacFilter
from gw.translator.envoy.stateful_session import StatefulSessionFilter


class HttpFilter(Protocol):
    name: str

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        """The filter for a listener's chain, or None when no virtual host needs it."""
        ...

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        """Per-virtual-host config (`typed_per_filter_config`), if any."""
        ...

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        """Per-route config (`typed_per_filter_config`), if any."""
        ...

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        """Extra (type URL, name, resource) the filter needs: clusters, secrets."""
        ...


def configures_routes(http_filter: HttpFilter) -> bool:
    """Whether `http_filter` can have per-host or per-route configs. A filter that never has
    any says so with `configures_routes = False`, and is not asked for each of them: the
    chain has some forty filters, and asking each of them about every host and route was a
    tenth of stage 2's time."""
    return getattr(http_filter, "configures_routes", True)


class Router:
    """Last in every chain; the listener's `router` options shape it."""

    name = names.ROUTER
    configures_routes = False

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(router_pb2.Router()))

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        settings = listener.plugins.router
        config = router_pb2.Router(suppress_envoy_headers=settings.suppress_envoy_headers)
        if settings.dynamic_stats is not None:
            config.dynamic_stats.CopyFrom(wrappers_pb2.BoolValue(value=settings.dynamic_stats))
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        return None

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


#: Agreed order (REFERENCE.md Appendix A): fault injection (the established Fault stage),
#: early transformation, cors, local rate limit, early global rate limit, jwt_authn before
#: extauth, ext_authz, jwt_authn after extauth (the default stage), rbac, regular
#: transformation, global rate limit, then the OutAuth stage (GCP identity tokens, AWS
#: Lambda, which turns the request into an invocation, and the dynamic forward proxy, by
#: name), the Route stage (buffer, CSRF), router. Each transformation stage is two header
#: filters (`envoy/transform.py`) and a Lua filter (`envoy/transform_script.py`). The early
#: global limit holds `rateLimitEarlyConfigs`, and `rateLimitConfigs` with
#: `rateLimitBeforeAuth`. The Settings' external processors stand where their `filterStage`
#: puts them: each `extproc.at(slot)` emits only the processors placed at that slot.
#: A Gateway's own filters: its health check first (a probe needs neither a route nor
#: credentials), compression next (so that it is last on the way back), gRPC-Web after
#: authorization and the gRPC-JSON transcoder after the rate limits (the established
#: places), and the sticky session just before the router.
HTTP_FILTERS: tuple[HttpFilter, ...] = (
    ListenerHealthCheckFilter(),
    GzipFilter(),
    *extproc.at("first"),
    FaultFilter(),
    *extproc.at("after_fault"),
    *transform.EARLY,
    transform_script.EARLY,
    CorsFilter(),
    *extproc.at("after_cors"),
    LocalRateLimitFilter(),
    GlobalRateLimitFilter("early"),
    JwtFilter("before"),
    SessionPassFilter(),
    ExtAuthzHttp(),
    ExtAuthzFallback(),
    ExtAuthz(),
    JwtFilter("after"),
    RbacFilter(),
    GrpcWebFilter(),
    *extproc.at("after_authn"),
    *transform.REGULAR,
    transform_script.REGULAR,
    *extproc.at("after_authz"),
    GlobalRateLimitFilter("regular"),
    *extproc.at("after_ratelimit"),
    GrpcJsonFilter(),
    GcpAuthnFilter(),
    AwsLambdaFilter(),
    DynamicForwardProxyFilter(),
    BufferFilter(),
    CsrfFilter(),
    StatefulSessionFilter(),
    *extproc.at("last"),
    Router(),
)

#: The filters asked for per-host and per-route configs, in chain order.
ROUTE_CONFIGURING: tuple[HttpFilter, ...] = tuple(f for f in HTTP_FILTERS if configures_routes(f))
