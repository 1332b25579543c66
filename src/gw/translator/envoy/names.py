"""Every Envoy name gw uses: resource type URLs, filter names, the ADS config source."""

from __future__ import annotations

from envoy.config.core.v3 import config_source_pb2
from google.protobuf.message import Message

from gw import defaults

_TYPE = "type.googleapis.com/"


def type_url(kind: type[Message]) -> str:
    """The type URL of a message type (one string per type, however many resources)."""
    found = _TYPE_URLS.get(kind)
    if found is None:
        found = _TYPE_URLS[kind] = _TYPE + kind.DESCRIPTOR.full_name
    return found


_TYPE_URLS: dict[type[Message], str] = {}

LISTENER = _TYPE + "envoy.config.listener.v3.Listener"
ROUTE = _TYPE + "envoy.config.route.v3.RouteConfiguration"
CLUSTER = _TYPE + "envoy.config.cluster.v3.Cluster"
ENDPOINT = _TYPE + "envoy.config.endpoint.v3.ClusterLoadAssignment"
SECRET = _TYPE + "envoy.extensions.transport_sockets.tls.v3.Secret"
#: Scopes of a sharded listener's routes (`shards.py`).
SCOPED_ROUTE = _TYPE + "envoy.config.route.v3.ScopedRouteConfiguration"
#: Resolved AuthConfigs, served to the extauth servers (not to Envoy) as Structs.
AUTH_CONFIG = _TYPE + "google.protobuf.Struct"
#: RateLimitConfigs' descriptor trees, served to the rate-limit servers as Structs.
RATE_LIMIT_CONFIG = _TYPE + "google.protobuf.Struct"

#: The order Envoy asks for them (CDS, EDS, LDS, SRDS, RDS, SDS); xDS dumps follow it.
TYPE_URLS = (CLUSTER, ENDPOINT, LISTENER, SCOPED_ROUTE, ROUTE, SECRET)
#: LDS and CDS are wildcard in SotW: every resource is sent and an absent one is deleted.
WILDCARD_TYPE_URLS = frozenset({LISTENER, CLUSTER})

HCM = "envoy.filters.network.http_connection_manager"
CONNECTION_LIMIT = "envoy.filters.network.connection_limit"
TCP_PROXY = "envoy.filters.network.tcp_proxy"
SNI_CLUSTER = "envoy.filters.network.sni_cluster"
NETWORK_LOCAL_RATELIMIT = "envoy.filters.network.local_ratelimit"
PROXY_PROTOCOL = "envoy.filters.listener.proxy_protocol"
EARLY_HEADER_MUTATION = "envoy.http.early_header_mutation.header_mutation"
PRESERVE_CASE = "envoy.http.stateful_header_formatters.preserve_case"
ZIPKIN = "envoy.tracers.zipkin"
OPENTELEMETRY = "envoy.tracers.opentelemetry"
#: The RBAC filter, first in every chain, that refuses a `Host` with userinfo or two `Host`s.
HOST_CHECK = "gw.host_check"
TLS_INSPECTOR = "envoy.filters.listener.tls_inspector"
TLS_TRANSPORT_SOCKET = "envoy.transport_sockets.tls"
ROUTER = "envoy.filters.http.router"
CORS = "envoy.filters.http.cors"
JWT_AUTHN = "envoy.filters.http.jwt_authn"
#: The second jwt_authn filter, before ext_authz (`jwtStaged.beforeExtAuth`); per-route
#: configs are keyed by this name.
JWT_AUTHN_BEFORE_EXTAUTH = "gw.jwt_authn.before_extauth"
RBAC = "envoy.filters.http.rbac"
EXT_AUTHZ = "envoy.filters.http.ext_authz"
#: The second ext_authz filter, for the checks gw's extauth server answers over HTTP.
EXT_AUTHZ_HTTP = "gw.ext_authz.http"
#: With session passes: the session pass check (jwt_authn) before the HTTP checks, and
#: the gRPC check of what the HTTP checks hand on (`envoy/extauth_pass.py`).
SESSION_PASS = "gw.session_pass"
EXT_AUTHZ_FALLBACK = "gw.ext_authz.fallback"
LOCAL_RATELIMIT = "envoy.filters.http.local_ratelimit"
RATELIMIT = "envoy.filters.http.ratelimit"
HEALTH_CHECK = "envoy.filters.http.health_check"
GRPC_WEB = "envoy.filters.http.grpc_web"
GRPC_JSON_TRANSCODER = "envoy.filters.http.grpc_json_transcoder"
COMPRESSOR = "envoy.filters.http.compressor"
GZIP_COMPRESSOR = "envoy.compression.gzip.compressor"
STATEFUL_SESSION = "envoy.filters.http.stateful_session"
COOKIE_SESSION_STATE = "envoy.http.stateful_session.cookie"
HEADER_SESSION_STATE = "envoy.http.stateful_session.header"
NETWORK_LOCAL_RATELIMIT = "envoy.filters.network.local_ratelimit"
FILE_ACCESS_LOG = "envoy.access_loggers.file"
GRPC_ACCESS_LOG = "envoy.access_loggers.http_grpc"
OTEL_ACCESS_LOG = "envoy.access_loggers.open_telemetry"
XFF_ORIGINAL_IP = "envoy.http.original_ip_detection.xff"
TCP_STATS = "envoy.transport_sockets.tcp_stats"
RAW_BUFFER = "envoy.transport_sockets.raw_buffer"
#: The second ratelimit filter, before authentication (per-route configs are keyed by name).
RATELIMIT_EARLY = "gw.ratelimit.early"
FAULT = "envoy.filters.http.fault"
CSRF = "envoy.filters.http.csrf"
BUFFER = "envoy.filters.http.buffer"
DYNAMIC_FORWARD_PROXY = "envoy.filters.http.dynamic_forward_proxy"
#: The cluster of routes forwarded by the dynamic forward proxy (no resource can make a
#: cluster name with `~`), and its DNS cache (the filter's and the cluster's must match).
DYNAMIC_FORWARD_PROXY_CLUSTER = "gw~dynamic-forward-proxy"
DYNAMIC_FORWARD_PROXY_DNS_CACHE = "gw~dynamic-forward-proxy"
#: The cluster ext_authz calls when Settings name no server: it does not exist, so every
#: check fails and Envoy denies (fail closed) instead of refusing the configuration.
EXTAUTH_SERVER_MISSING = "gw~extauth-server-not-configured"
#: Likewise for the rate-limit server (the filter then denies: failure_mode_deny).
RATELIMIT_SERVER_MISSING = "gw~ratelimit-server-not-configured"
#: The cluster a TCP host whose destination does not exist proxies to: it never exists, so
#: Envoy closes the connection (as it answers 503 for an HTTP route to a missing upstream).
TCP_DESTINATION_MISSING = "gw~tcp-destination-not-found"
#: What earlier releases called gw's own clusters: Envoys started with their bootstraps may
#: still run during an upgrade, and `xds_cluster` is what `{name: xds, namespace: cluster}`
#: would make.
LEGACY_INTERNAL_CLUSTERS = (
    "xds_cluster",
    "gw-proxy-admin",
    "extauth-server-not-configured",
    "ratelimit-server-not-configured",
)
#: Cluster names no resource may produce: routing to one would hand client traffic to gw
#: itself (the xDS server serves every TLS key and OAuth client secret).
RESERVED_CLUSTERS = frozenset(
    {
        defaults.XDS_CLUSTER,
        defaults.PROXY_ADMIN_CLUSTER,
        defaults.GCP_METADATA_CLUSTER,
        EXTAUTH_SERVER_MISSING,
        RATELIMIT_SERVER_MISSING,
        TCP_DESTINATION_MISSING,
        *LEGACY_INTERNAL_CLUSTERS,
    }
)


def transform_filter(stage: str, step: str) -> str:
    """The name of a transformation stage's filter (`extract` or `headers`): per-route
    configs are keyed by it, so each of the four instances gets its own."""
    return f"gw.transform.{stage}.{step}"


def ext_proc_filter(variant: str) -> str:
    """The name of a Settings processor's ext_proc filter (`early`, `regular`, `late`):
    per-route configs are keyed by it."""
    return f"gw.ext_proc.{variant}"


def transform_metadata(stage: str) -> str:
    """The dynamic-metadata namespace holding a stage's extracted values."""
    return f"gw.transform.{stage}"


def reserved_cluster_problem(cluster: str) -> str | None:
    """Why a resource may not make the Envoy cluster `cluster`; None when it may."""
    if cluster not in RESERVED_CLUSTERS:
        return None
    return (
        f"the Envoy cluster name {cluster} is reserved for gw's own clusters (the xDS server "
        "and the like), which no route may reach: rename the Upstream or its namespace"
    )


def ads_config_source() -> config_source_pb2.ConfigSource:
    """Resources of every type come over the one ADS stream."""
    return config_source_pb2.ConfigSource(
        ads=config_source_pb2.AggregatedConfigSource(),
        resource_api_version=config_source_pb2.V3,
    )
