"""The Proxy IR: what stage 1 (resources) hands to stage 2 (Envoy), as frozen dataclasses.

Every reference is resolved here (a route names a cluster that is in `Proxy.clusters`,
key material sits in `Proxy.secrets`), every default is applied, and nothing imports the
API models or protobuf: a reader can follow a request from listener to cluster without
knowing either. Sequences are tuples; maps are sorted tuples of pairs.

One module per area, named with the feature word of the other layers (`api/jwt.py` →
`gateway/jwt.py` → `ir/jwt.py` → `envoy/jwt.py`): the tree `proxy` → `listeners` →
`virtualhosts` → `routes` → `clusters`, plus `secrets` and `source`, and the options
`transform`, `headers`, `jwt`, `rbac`, `extauth`, `ratelimit`, `retries`, `cors`, `tls`, the
listener's `hcm` (how it speaks HTTP), `routeconfig`, `access_log` and `http_listener` (the
filters its own options add: `listener_health`, `gzip`, `stateful_session`), and for
clusters `loadbalancer`, `healthcheck`, `aws`; the traffic options are held by `traffic`
(`faults`, `shadowing`, `rewrite`, `timeouts`, `upgrades`, `csrf`, `buffer`, `extproc`,
`routetracing`, `stats`, with `matching`'s fractions and string matchers), and
`dynamicforwardproxy` completes them. A new option is a dataclass in its feature's module
(a new module for a new feature), the field of `VirtualHost`, `Route` or `Cluster` that
holds it, and its name in `__all__` below. Code outside this package writes `ir.Route`,
never `ir.routes.Route`. The configs of gw's own servers are not IR but contracts with
those servers (`gw.wire`); the Proxy carries them.
Unions used in annotations (`Expr`, `Node`, `Stage`, `Step`) are re-exported as `X as X`
but are not in `__all__`: they are not types of their own.
"""

from __future__ import annotations

from gw.translator.ir.access_log import AccessLog, LogCollector, LogFilter, LogHeader
from gw.translator.ir.aws import AwsCredentials, LambdaInvocation
from gw.translator.ir.buffer import BufferLimit
from gw.translator.ir.clusters import (
    CircuitBreakers,
    Cluster,
    ConnectionOptions,
    DnsOptions,
    Endpoint,
    Http1Options,
    Locality,
    Preconnect,
    ServiceSelection,
    TcpKeepalive,
)
from gw.translator.ir.cors import CorsPolicy
from gw.translator.ir.csrf import CsrfPolicy
from gw.translator.ir.dynamicforwardproxy import (
    DnsCache,
    DynamicForwardProxy,
    DynamicForwardProxyListener,
)
from gw.translator.ir.extauth import (
    AuthService,
    CustomAuth,
    ExtAuth,
    ExtAuthServer,
    HttpAuthService,
    HttpChecks,
)
from gw.translator.ir.extproc import (
    ExtProcOverrides,
    ExtProcRoute,
    ExtProcServer,
    GrpcTarget,
    ListenerExtProc,
    MutationRules,
    ProcessingMode,
)
from gw.translator.ir.faults import FaultAbort, FaultDelay, Faults
from gw.translator.ir.grpc_json import GrpcJsonTranscoder
from gw.translator.ir.gzip import Gzip
from gw.translator.ir.hcm import Http2Options, HttpSettings, Tracing, TracingTag
from gw.translator.ir.headers import HeaderManipulation, HeaderValue
from gw.translator.ir.healthcheck import (
    GrpcHealthCheck,
    HealthCheck,
    HttpHealthCheck,
    OutlierDetection,
    TcpHealthCheck,
)
from gw.translator.ir.http_listener import (
    HttpListenerOptions,
    ListenerLocalRateLimit,
    RouterSettings,
)
from gw.translator.ir.jwt import (
    ClaimToHeader,
    JwtProvider,
    JwtVerification,
    RemoteJwks,
    RouteJwt,
    RouteJwtStage,
    TokenHeader,
)
from gw.translator.ir.listener_health import ListenerHealthCheck
from gw.translator.ir.listeners import (
    ChainMatch,
    ConnectionLimit,
    Listener,
    ListenerOptions,
    MatchedListener,
    ProxyProtocol,
    ProxyProtocolRule,
    SocketOption,
    TcpListener,
)
from gw.translator.ir.loadbalancer import (
    HashPolicy,
    LoadBalancer,
    SlowStart,
    SubsetConfig,
    SubsetSelector,
)
from gw.translator.ir.matching import Fraction, StringMatch
from gw.translator.ir.proxy import Proxy
from gw.translator.ir.ratelimit import (
    Action,
    BasicLimits,
    CountLimit,
    HeaderCondition,
    LocalLimit,
    Policy,
    RateLimits,
    RateLimitServer,
)
from gw.translator.ir.rbac import ClaimMatch, Rbac, RbacPolicy, RbacPrincipal
from gw.translator.ir.retries import RetryPolicy
from gw.translator.ir.rewrite import RegexRewrite, Rewrites
from gw.translator.ir.routeconfig import RouteConfigOptions
from gw.translator.ir.routes import (
    DirectResponse,
    Forward,
    HeaderMatch,
    QueryMatch,
    Redirect,
    Route,
    RouteMatch,
    WeightedCluster,
)
from gw.translator.ir.routetracing import RouteTracing
from gw.translator.ir.secrets import TlsSecret
from gw.translator.ir.shadowing import Shadow
from gw.translator.ir.source import RouteOrigin, SourceRef
from gw.translator.ir.stateful_session import StatefulSession
from gw.translator.ir.stats import VirtualCluster
from gw.translator.ir.tcp import TcpHost, TcpProxySettings, TcpTunnel
from gw.translator.ir.template import (
    Branch,
    Call,
    For,
    If,
    Literal,
    Op,
    Output,
    Set,
    Text,
    Var,
)
from gw.translator.ir.template import (
    Expr as Expr,
)
from gw.translator.ir.template import (
    Node as Node,
)
from gw.translator.ir.timeouts import StreamTimeouts
from gw.translator.ir.tls import TlsTermination, UpstreamTls
from gw.translator.ir.traffic import DestinationTraffic, HostTraffic, RouteTraffic
from gw.translator.ir.transform import (
    Extractor,
    ExtractorRef,
    HeaderBodyTransformation,
    HeaderTemplate,
    MatchHeader,
    MergedKey,
    MetadataValue,
    RenderedHeader,
    RequestCondition,
    RequestHeaderRef,
    RequestRule,
    ResponseRule,
    StagedTransformations,
    TemplateExtractor,
    TemplateTransformation,
    Transformation,
    TransformationScript,
)
from gw.translator.ir.transform import (
    Stage as Stage,
)
from gw.translator.ir.transform import (
    Step as Step,
)
from gw.translator.ir.upgrades import Upgrade
from gw.translator.ir.virtualhosts import VirtualHost

__all__ = [
    "AccessLog",
    "Action",
    "AuthService",
    "AwsCredentials",
    "BasicLimits",
    "Branch",
    "BufferLimit",
    "Call",
    "ChainMatch",
    "CircuitBreakers",
    "ClaimMatch",
    "ClaimToHeader",
    "Cluster",
    "ConnectionLimit",
    "ConnectionOptions",
    "CorsPolicy",
    "CountLimit",
    "CsrfPolicy",
    "CustomAuth",
    "DestinationTraffic",
    "DirectResponse",
    "DnsCache",
    "DnsOptions",
    "DynamicForwardProxy",
    "DynamicForwardProxyListener",
    "Endpoint",
    "ExtAuth",
    "ExtAuthServer",
    "ExtProcOverrides",
    "ExtProcRoute",
    "ExtProcServer",
    "Extractor",
    "ExtractorRef",
    "FaultAbort",
    "FaultDelay",
    "Faults",
    "For",
    "Forward",
    "Fraction",
    "GrpcHealthCheck",
    "GrpcJsonTranscoder",
    "GrpcTarget",
    "Gzip",
    "HashPolicy",
    "HeaderBodyTransformation",
    "HeaderCondition",
    "HeaderManipulation",
    "HeaderMatch",
    "HeaderTemplate",
    "HeaderValue",
    "HealthCheck",
    "HostTraffic",
    "Http1Options",
    "Http2Options",
    "HttpAuthService",
    "HttpChecks",
    "HttpHealthCheck",
    "HttpListenerOptions",
    "HttpSettings",
    "If",
    "JwtProvider",
    "JwtVerification",
    "LambdaInvocation",
    "Listener",
    "ListenerExtProc",
    "ListenerHealthCheck",
    "ListenerLocalRateLimit",
    "ListenerOptions",
    "Literal",
    "LoadBalancer",
    "LocalLimit",
    "Locality",
    "LogCollector",
    "LogFilter",
    "LogHeader",
    "MatchHeader",
    "MatchedListener",
    "MergedKey",
    "MetadataValue",
    "MutationRules",
    "Op",
    "OutlierDetection",
    "Output",
    "Policy",
    "Preconnect",
    "ProcessingMode",
    "Proxy",
    "ProxyProtocol",
    "ProxyProtocolRule",
    "QueryMatch",
    "RateLimitServer",
    "RateLimits",
    "Rbac",
    "RbacPolicy",
    "RbacPrincipal",
    "Redirect",
    "RegexRewrite",
    "RemoteJwks",
    "RenderedHeader",
    "RequestCondition",
    "RequestHeaderRef",
    "RequestRule",
    "ResponseRule",
    "RetryPolicy",
    "Rewrites",
    "Route",
    "RouteConfigOptions",
    "RouteJwt",
    "RouteJwtStage",
    "RouteMatch",
    "RouteOrigin",
    "RouteTracing",
    "RouteTraffic",
    "RouterSettings",
    "ServiceSelection",
    "Set",
    "Shadow",
    "SlowStart",
    "SocketOption",
    "SourceRef",
    "StagedTransformations",
    "StatefulSession",
    "StreamTimeouts",
    "StringMatch",
    "SubsetConfig",
    "SubsetSelector",
    "TcpHealthCheck",
    "TcpHost",
    "TcpKeepalive",
    "TcpListener",
    "TcpProxySettings",
    "TcpTunnel",
    "TemplateExtractor",
    "TemplateTransformation",
    "Text",
    "TlsSecret",
    "TlsTermination",
    "TokenHeader",
    "Tracing",
    "TracingTag",
    "Transformation",
    "TransformationScript",
    "Upgrade",
    "UpstreamTls",
    "Var",
    "VirtualCluster",
    "VirtualHost",
    "WeightedCluster",
]


def _with_slot_setters() -> None:
    """Every IR class gets an `__init__` that sets its slots directly (`frozen.py`)."""
    import dataclasses

    from gw.translator.ir.frozen import use_slot_setters

    for name in __all__:
        cls = globals()[name]
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            use_slot_setters(cls)


_with_slot_setters()
