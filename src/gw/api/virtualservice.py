"""VirtualService (`gateway.vendor.io/v1`): a virtual host, its routes and their options."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from gw.api.cors import CorsPolicy
from gw.api.delegation import DelegateAction, OptionsConfigRefs
from gw.api.duration import Duration
from gw.api.dynamicforwardproxy import DynamicForwardProxyRoute
from gw.api.extauth import ExtAuthExtension
from gw.api.functions import DestinationSpec
from gw.api.headers import HeaderManipulation
from gw.api.jwt import JwtStagedRoute, JwtStagedVhost, RouteJwt, VhostJwt
from gw.api.loadbalancer import RouteActionHashConfig
from gw.api.matching import RegexMatchAndSubstitute
from gw.api.meta import Model, Resource, ResourceRef
from gw.api.ratelimit import (
    IngressRateLimit,
    LocalRateLimit,
    RateLimitConfigRefs,
    RateLimitRouteExtension,
    RateLimitVhostExtension,
)
from gw.api.rbac import Rbac
from gw.api.retries import RetryPolicy
from gw.api.subsets import Subset
from gw.api.tls import SslConfig
from gw.api.traffic import (
    DestinationTrafficOptions,
    RouteTrafficOptions,
    VirtualHostTrafficOptions,
)
from gw.api.transform import Transformations, TransformationStages


class HeaderMatcher(Model):
    name: str
    value: str = ""
    regex: bool = False
    invert_match: bool = False


class QueryParameterMatcher(Model):
    name: str
    value: str = ""
    regex: bool = False


class ConnectMatcher(Model):
    """Matches HTTP CONNECT requests (no fields)."""


class Matcher(Model):
    """A request match. Exactly one path specifier (`prefix`, `exact`, `regex` or
    `connectMatcher`)."""

    prefix: str | None = None
    exact: str | None = None
    regex: str | None = None
    connect_matcher: ConnectMatcher | None = None
    case_sensitive: bool | None = None
    # Tuples, not lists: every route has a matcher, and pydantic gives each model a copy of
    # a list default (three empty lists a route, 20 MB at 100,000).
    headers: tuple[HeaderMatcher, ...] = ()
    query_parameters: tuple[QueryParameterMatcher, ...] = ()
    methods: tuple[str, ...] = ()


class OrchServiceRef(Model):
    """`routeAction.single.orch.ref`: an orchestrator Service. SPEC.md puts `port` in the
    ref; the established API puts it beside the ref. Both spellings are accepted."""

    name: str
    namespace: str = ""
    port: int | None = None


class OrchDestination(Model):
    ref: OrchServiceRef
    port: int | None = None


class Destination(Model):
    upstream: ResourceRef | None = None
    orch: OrchDestination | None = None
    subset: Subset | None = None
    destination_spec: DestinationSpec | None = None


#: Envoy's bound on a weighted split: each weight, and their sum (a larger sum is a NACK).
MAX_TOTAL_WEIGHT = 2**32 - 1


class WeightedDestinationOptions(DestinationTrafficOptions):
    staged_transformations: TransformationStages | None = None
    transformations: Transformations | None = None


class WeightedDestination(Model):
    destination: Destination
    weight: int = Field(default=0, ge=0, le=MAX_TOTAL_WEIGHT)
    options: WeightedDestinationOptions | None = None


class MultiDestination(Model):
    destinations: list[WeightedDestination] = []


class RouteAction(Model):
    single: Destination | None = None
    multi: MultiDestination | None = None
    upstream_group: ResourceRef | None = None
    cluster_header: str | None = None
    dynamic_forward_proxy: DynamicForwardProxyRoute | None = None


class DirectResponseAction(Model):
    status: int = Field(ge=200, le=599)
    body: str | None = None


class RedirectAction(Model):
    host_redirect: str | None = None
    path_redirect: str | None = None
    prefix_rewrite: str | None = None
    regex_rewrite: RegexMatchAndSubstitute | None = None
    response_code: (
        Literal[
            "MOVED_PERMANENTLY", "FOUND", "SEE_OTHER", "TEMPORARY_REDIRECT", "PERMANENT_REDIRECT"
        ]
        | None
    ) = None
    https_redirect: bool = False
    strip_query: bool = False
    port_redirect: int | None = None


#: The rate-limit places of the established API, each a oneof (configs or inline actions).
_RATE_LIMIT_ONEOFS = (
    frozenset({"ratelimit", "rate_limit_configs"}),
    frozenset({"ratelimit_early", "rate_limit_early_configs"}),
    frozenset({"ratelimit_regular", "rate_limit_regular_configs"}),
)


class RouteOptions(RouteTrafficOptions):
    #: Each merges as one field (optionsConfigRefs, delegation): see `RouteTrafficOptions`.
    ONEOFS: ClassVar[tuple[frozenset[str], ...]] = (
        *RouteTrafficOptions.ONEOFS,
        frozenset({"jwt", "jwt_staged", "jwt_providers_staged"}),
        *_RATE_LIMIT_ONEOFS,
    )

    prefix_rewrite: str | None = None
    timeout: Duration | None = None
    host_rewrite: str | None = None
    auto_host_rewrite: bool | None = None
    header_manipulation: HeaderManipulation | None = None
    staged_transformations: TransformationStages | None = None
    transformations: Transformations | None = None
    jwt: RouteJwt | None = None
    rbac: Rbac | None = None
    extauth: ExtAuthExtension | None = None
    retries: RetryPolicy | None = None
    cors: CorsPolicy | None = None
    rate_limit_configs: RateLimitConfigRefs | None = None
    rate_limit_early_configs: RateLimitConfigRefs | None = None
    rate_limit_regular_configs: RateLimitConfigRefs | None = None
    local_ratelimit: LocalRateLimit | None = None
    lb_hash: RouteActionHashConfig | None = None
    jwt_staged: JwtStagedRoute | None = None
    jwt_providers_staged: JwtStagedVhost | None = None
    ratelimit: RateLimitRouteExtension | None = None
    ratelimit_early: RateLimitRouteExtension | None = None
    ratelimit_regular: RateLimitRouteExtension | None = None
    ratelimit_basic: IngressRateLimit | None = None


class Route(Model):
    matchers: list[Matcher] = []
    inheritable_matchers: bool | None = None
    inheritable_path_matchers: bool | None = None
    route_action: RouteAction | None = None
    redirect_action: RedirectAction | None = None
    direct_response_action: DirectResponseAction | None = None
    delegate_action: DelegateAction | None = None
    options: RouteOptions | None = None
    options_config_refs: OptionsConfigRefs | None = None
    name: str | None = None


class VirtualHostOptions(VirtualHostTrafficOptions):
    ONEOFS: ClassVar[tuple[frozenset[str], ...]] = (
        frozenset({"jwt", "jwt_staged"}),
        *_RATE_LIMIT_ONEOFS,
    )

    jwt: VhostJwt | None = None
    rbac: Rbac | None = None
    extauth: ExtAuthExtension | None = None
    staged_transformations: TransformationStages | None = None
    transformations: Transformations | None = None
    header_manipulation: HeaderManipulation | None = None
    retries: RetryPolicy | None = None
    cors: CorsPolicy | None = None
    rate_limit_configs: RateLimitConfigRefs | None = None
    rate_limit_early_configs: RateLimitConfigRefs | None = None
    rate_limit_regular_configs: RateLimitConfigRefs | None = None
    local_ratelimit: LocalRateLimit | None = None
    jwt_staged: JwtStagedVhost | None = None
    ratelimit: RateLimitVhostExtension | None = None
    ratelimit_early: RateLimitVhostExtension | None = None
    ratelimit_regular: RateLimitVhostExtension | None = None
    ratelimit_basic: IngressRateLimit | None = None


class VirtualHost(Model):
    domains: list[str] = []
    routes: list[Route] = []
    options: VirtualHostOptions | None = None
    options_config_refs: OptionsConfigRefs | None = None


class VirtualServiceSpec(Model):
    virtual_host: VirtualHost | None = None
    ssl_config: SslConfig | None = None
    display_name: str | None = None


class VirtualService(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "VirtualService"
    PLURAL: ClassVar[str] = "virtualservices"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("vs",)

    spec: VirtualServiceSpec
