"""Routes: how a request is matched (path, headers, query parameters, methods) and what
is done with it (forwarded to clusters by weight, answered directly, or redirected), with
the options a route sets to replace its virtual host's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator.ir.aws import LambdaInvocation
from gw.translator.ir.clusters import ServiceSelection
from gw.translator.ir.cors import CorsPolicy
from gw.translator.ir.dynamicforwardproxy import DynamicForwardProxy
from gw.translator.ir.extauth import ExtAuth
from gw.translator.ir.headers import HeaderManipulation
from gw.translator.ir.jwt import RouteJwt
from gw.translator.ir.loadbalancer import HashPolicy
from gw.translator.ir.ratelimit import RateLimits
from gw.translator.ir.rbac import Rbac
from gw.translator.ir.retries import RetryPolicy
from gw.translator.ir.rewrite import RegexRewrite
from gw.translator.ir.source import RouteOrigin
from gw.translator.ir.traffic import DestinationTraffic, RouteTraffic
from gw.translator.ir.transform import StagedTransformations


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderMatch:
    name: str
    value: str = ""  # empty: the header must be present
    regex: bool = False
    invert: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMatch:
    name: str
    value: str = ""
    regex: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteMatch:
    #: `connect`: HTTP CONNECT requests (`path` is empty).
    path_kind: Literal["prefix", "exact", "regex", "connect"]
    path: str
    case_sensitive: bool = True
    headers: tuple[HeaderMatch, ...] = ()
    query: tuple[QueryMatch, ...] = ()
    methods: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedCluster:
    cluster: str
    weight: int = 1
    #: Set when the route addresses an orchestrator service directly (`orch` destination):
    #: stage 1 adds the service's cluster next to the route.
    service: ServiceSelection | None = None
    #: The destination's own options (`multi.destinations[].options`).
    traffic: DestinationTraffic | None = None
    #: Set: replaces the route's (and virtual host's) transformations for requests sent to
    #: this cluster.
    transformations: StagedTransformations | None = None
    #: Only the cluster's endpoints carrying these labels (its subset load balancer).
    subset: tuple[tuple[str, str], ...] | None = None
    #: The AWS Lambda function the request invokes (the cluster is a Lambda endpoint).
    aws_lambda: LambdaInvocation | None = None
    #: The Host the cluster's service needs (a cloud service that routes by Host); the
    #: route's own host rewrite wins over it.
    host_rewrite: str | None = None
    #: The cluster is a Google Cloud service: the request gets its identity token
    #: (`Cluster.gcp_audience`) on the way.
    gcp_identity_token: bool | None = None
    #: The path the request is sent with (its query kept): an Azure function's
    #: `/api/<name>`. Only ever on a route's one cluster: Envoy rewrites paths per route.
    path_rewrite: str | None = None
    #: The Azure Functions key the request carries (`x-functions-key`).
    function_key: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Forward:
    """Send the request to one cluster, or split it across several by weight; or to the
    cluster a request header names (`cluster_header`), or to the host the request names
    (`dynamic_forward_proxy`), `clusters` being empty then."""

    clusters: tuple[WeightedCluster, ...]
    cluster_header: str | None = None
    dynamic_forward_proxy: DynamicForwardProxy | None = None
    prefix_rewrite: str | None = None
    timeout_ms: int | None = None
    host_rewrite: str | None = None
    auto_host_rewrite: bool = False
    #: What hashing load balancers (ring hash, maglev) hash, in order.
    hash_policies: tuple[HashPolicy, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectResponse:
    status: int
    body: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Redirect:
    host: str | None = None
    path: str | None = None
    prefix_rewrite: str | None = None
    regex_rewrite: RegexRewrite | None = None
    response_code: int = 301
    https: bool = False
    strip_query: bool = False
    port: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    name: str
    match: RouteMatch
    action: Forward | DirectResponse | Redirect
    #: Set: replaces the virtual host's transformations on this route (both stages).
    transformations: StagedTransformations | None = None
    headers: HeaderManipulation | None = None
    #: The route's own JWT check, or the host's switched off, per stage (None: the host's).
    jwt: RouteJwt | None = None
    #: Replaces the virtual host's RBAC on this route (None: inherit it).
    rbac: Rbac | None = None
    #: None: as the virtual host says.
    extauth: ExtAuth | None = None
    #: Replaces the virtual host's retry policy on this route (None: inherit it).
    retries: RetryPolicy | None = None
    #: Replaces the virtual host's CORS policy on this route (None: inherit it).
    cors: CorsPolicy | None = None
    #: Replaces the virtual host's global and local limits on this route (None: inherit).
    ratelimit: RateLimits | None = None
    #: Faults, shadowing, rewrites, timeouts, upgrades, CSRF, buffer, ext_proc, tracing.
    traffic: RouteTraffic | None = None
    #: Where the route was written; for a delegated route, in its RouteTable.
    source: RouteOrigin | None = None
    #: The delegating routes that led to it, from the VirtualService's down.
    delegated_by: tuple[RouteOrigin, ...] = ()
    #: Set: Envoy keeps statistics for this route under `vhost.<host>.route.<stat_prefix>.`
    #: (requests, response classes, upstream time); None: only per cluster (the default:
    #: per-route statistics cost proxy memory on every route, `gw up --route-stats`).
    stat_prefix: str | None = None
