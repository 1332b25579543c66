"""The Proxy IR: what stage 1 (resources) hands to stage 2 (Envoy), as frozen dataclasses.

Every reference is resolved here (a route names a cluster that is in `Proxy.clusters`,
key material sits in `Proxy.secrets`), every default is applied, and nothing imports the
API models or protobuf: a reader can follow a request from listener to cluster without
knowing either. Sequences are tuples; maps are sorted tuples of pairs.

One module per area, named with the feature word of the other layers (`api/jwt.py` →
`gateway/jwt.py` → `ir/jwt.py` → `envoy/jwt.py`): the tree `proxy` → `listeners` →
`virtualhosts` → `routes` → `clusters`, plus `secrets` and `source`, and the options
`transform`, `headers`, `jwt`, `rbac`, `extauth`, `ratelimit`, `retries`, `cors`, `tls`, the
listener's `hcm` (how it speaks HTTP), `access_log` and `http_listener` (the filters its own
options add: `listener_health`, `gzip`, `stateful_session`), and for clusters
`loadbalancer`, `healthcheck`, `aws`. A new option is a dataclass in its feature's module
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
from gw.translator.ir.extauth import (
    AuthService,
    CustomAuth,
    ExtAuth,
    ExtAuthServer,
    HttpAuthService,
)
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
    ConnectionLimit,
    Listener,
    ListenerOptions,
    ProxyProtocol,
    ProxyProtocolRule,
    SocketOption,
)
from gw.translator.ir.loadbalancer import (
    HashPolicy,
    LoadBalancer,
    SlowStart,
    SubsetConfig,
    SubsetSelector,
)
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
from gw.translator.ir.secrets import TlsSecret
from gw.translator.ir.source import RouteOrigin, SourceRef
from gw.translator.ir.stateful_session import StatefulSession
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
from gw.translator.ir.tls import TlsTermination, UpstreamTls
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
from gw.translator.ir.virtualhosts import VirtualHost

__all__ = [
    "AccessLog",
    "Action",
    "AuthService",
    "AwsCredentials",
    "BasicLimits",
    "Branch",
    "Call",
    "CircuitBreakers",
    "ClaimMatch",
    "ClaimToHeader",
    "Cluster",
    "ConnectionLimit",
    "ConnectionOptions",
    "CorsPolicy",
    "CountLimit",
    "CustomAuth",
    "DirectResponse",
    "DnsOptions",
    "Endpoint",
    "ExtAuth",
    "ExtAuthServer",
    "Extractor",
    "ExtractorRef",
    "For",
    "Forward",
    "GrpcHealthCheck",
    "GrpcJsonTranscoder",
    "Gzip",
    "HashPolicy",
    "HeaderBodyTransformation",
    "HeaderCondition",
    "HeaderManipulation",
    "HeaderMatch",
    "HeaderTemplate",
    "HeaderValue",
    "HealthCheck",
    "Http1Options",
    "Http2Options",
    "HttpAuthService",
    "HttpHealthCheck",
    "HttpListenerOptions",
    "HttpSettings",
    "If",
    "JwtProvider",
    "JwtVerification",
    "LambdaInvocation",
    "Listener",
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
    "MergedKey",
    "MetadataValue",
    "Op",
    "OutlierDetection",
    "Output",
    "Policy",
    "Preconnect",
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
    "RemoteJwks",
    "RenderedHeader",
    "RequestCondition",
    "RequestHeaderRef",
    "RequestRule",
    "ResponseRule",
    "RetryPolicy",
    "Route",
    "RouteJwt",
    "RouteJwtStage",
    "RouteMatch",
    "RouteOrigin",
    "RouterSettings",
    "ServiceSelection",
    "Set",
    "SlowStart",
    "SocketOption",
    "SourceRef",
    "StagedTransformations",
    "StatefulSession",
    "SubsetConfig",
    "SubsetSelector",
    "TcpHealthCheck",
    "TcpKeepalive",
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
    "UpstreamTls",
    "Var",
    "VirtualHost",
    "WeightedCluster",
]
