"""VirtualServices → virtual hosts, and the check that no two claim the same domain."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable

from gw import api
from gw.api import ResourceKey
from gw.api.virtualservice import VirtualHostOptions
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.gateway.contribution import BuiltHost, Contribution, ListenerRole
from gw.translator.gateway.cors import build_cors, merge_cors_policies
from gw.translator.gateway.extauth import AuthConfigUse
from gw.translator.gateway.gateways import HTTP, HTTPS
from gw.translator.gateway.headers import HeaderSecrets, build_header_manipulation
from gw.translator.gateway.jwt_stages import HostJwt, build_host_jwt
from gw.translator.gateway.optionrefs import merge_option_refs
from gw.translator.gateway.ratelimit import RateLimitResolver
from gw.translator.gateway.ratelimit_basic import basic_configs
from gw.translator.gateway.rbac import build_rbac
from gw.translator.gateway.retries import build_retries
from gw.translator.gateway.routes import RouteBuilder
from gw.translator.gateway.settings import DEFAULT_ROUTES, RoutePolicy
from gw.translator.gateway.tls import build_tls
from gw.translator.gateway.traffic import build_host_traffic
from gw.translator.gateway.transform import build_transformations
from gw.translator.options import Options
from gw.translator.refs import Reads, Refs
from gw.translator.reports import Reports, ResourceReport

_OPTIONS = "spec.virtualHost.options"
_NO_OPTIONS = VirtualHostOptions()
#: The JWT of a host that sets no options (nothing changes a `HostJwt` once made).
_NO_JWT = HostJwt()


def vhost_name(namespace: str, name: str) -> str:
    """Envoy virtual host names may not contain dots: `<namespace>_<name>`."""
    return f"{namespace}_{name}"


def build_host(
    vs: api.VirtualService,
    snapshot: Snapshot,
    options: Options,
    refs: Refs,
    reports: Reports,
    *,
    require_rbac: bool = False,
    route_policy: RoutePolicy = DEFAULT_ROUTES,
    reads: Reads | None = None,
    clock: Clock | None = None,
) -> BuiltHost:
    """One VirtualService's contribution, with its findings and the references it resolved
    handed back as values: `refs` and `reports` are only read (whether a resource it uses
    is rejected). `require_rbac` (Settings `rbac.requireRbac`): a host without policies
    denies all; `route_policy`: what the Settings say about routes. With `reads` (and a
    recording `clock`), what the build looked at is recorded (`hostcache.py` reuses the
    result while that is unchanged)."""
    scoped_refs = refs.scope(reads)
    scoped = reports.scope(reads.states if reads is not None else None)
    clock = clock or Clock(options.now)
    contribution = _contribution(
        vs, snapshot, options, scoped_refs, scoped, (require_rbac, route_policy), clock
    )
    return BuiltHost(
        vs=vs,
        contribution=contribution,
        findings=scoped.findings(),
        edges=tuple(scoped_refs.edges),
    )


def _contribution(
    vs: api.VirtualService,
    snapshot: Snapshot,
    options: Options,
    refs: Refs,
    reports: Reports,
    rules: tuple[bool, RoutePolicy],
    clock: Clock,
) -> Contribution | None:
    """The host on the built-in listener it belongs to: `http`, or `https` with its TLS
    (`rules`: Settings' `requireRbac` and route policy)."""
    require_rbac, route_policy = rules
    plain = vs.spec.ssl_config is None
    built = build_virtual_host(
        vs,
        refs,
        reports,
        require_rbac=require_rbac,
        route_policy=route_policy,
        port=options.http_port if plain else None,
    )
    if built is None:
        return None
    if options.route_stats:
        built = with_route_stats(built)
    if plain:
        return Contribution(virtual_hosts=((HTTP, built),), rate_limit_configs=basic_configs(built))
    tls = build_tls(vs, built.domains, snapshot, refs, reports.of(vs.key), clock)
    if tls is None:
        return None
    termination, secret = tls
    domains = with_ports(built.domains, options.https_port)
    vhost = dataclasses.replace(built, domains=domains, tls=termination)
    return Contribution(
        virtual_hosts=((HTTPS, vhost),), secrets=(secret,), rate_limit_configs=basic_configs(built)
    )


def with_route_stats(vhost: ir.VirtualHost) -> ir.VirtualHost:
    """Statistics of its own for each route, under the route's name."""
    routes = tuple(dataclasses.replace(r, stat_prefix=r.name) for r in vhost.routes)
    return dataclasses.replace(vhost, routes=routes)


def with_ports(domains: tuple[str, ...], port: int) -> tuple[str, ...]:
    """The domains, also matching a `Host` that carries a port.

    Clients add the port to `Host` when it is not the scheme's default (`gw up` listens on
    8080 and 8443), and a port must not make a request miss its virtual host. The Host is
    left as the client sent it (the upstream may build URLs from it). `a.test` also matches
    `a.test:<any port>`; Envoy's `*.a.test` wildcard can only be given the listener's own
    port; `*` and `a.*` match ports already; a domain with a port is left as written.
    """
    out = list(domains)
    for domain in domains:
        if domain == "*" or domain.endswith("*") or ":" in domain:
            continue
        variant = f"{domain}:{port}" if domain.startswith("*") else f"{domain}:*"
        if variant not in out:
            out.append(variant)
    return tuple(out)


def build_virtual_host(
    vs: api.VirtualService,
    refs: Refs,
    reports: Reports,
    *,
    require_rbac: bool = False,
    route_policy: RoutePolicy = DEFAULT_ROUTES,
    port: int | None = None,
) -> ir.VirtualHost | None:
    """`vs`'s virtual host; with `port`, its domains also match a `Host` with that port
    (`with_ports`: the listener's port is known for a plain host)."""
    report = reports.of(vs.key)
    spec = vs.spec
    meta = vs.metadata
    if spec.virtual_host is None:
        report.warning(
            "spec.virtualHost",
            f"virtual service [{meta.namespace}.{meta.name}] does not specify a virtual host",
        )
        return None
    vhost = spec.virtual_host
    name = vhost_name(meta.namespace, meta.name)
    domains = _domains(vhost.domains, name, report)
    if port is not None:
        domains = with_ports(domains, port)
    options = (
        merge_option_refs(
            vhost.options,
            api.VirtualHostOption,
            vhost.options_config_refs,
            referrer=vs.key,
            field="spec.virtualHost.optionsConfigRefs",
            refs=refs,
            reports=reports,
            report=report,
        )
        or _NO_OPTIONS
    )
    # No options at all (most hosts): every option builder below gives None and finds
    # nothing (test_no_options checks it); the JWT and RBAC checks still apply.
    no_options = sets_nothing(options)
    jwt, rbac = _security(options, vs, name, refs, report, require_rbac)
    routes = RouteBuilder(vs, name, refs, reports, jwt=jwt, policy=route_policy)
    extauth = None
    if options.extauth is not None:
        extauth = routes.extauth.resolve(options.extauth, f"{_OPTIONS}.extauth")
    transformations = None
    if not no_options:
        transformations = build_transformations(
            options.staged_transformations, options.transformations, _OPTIONS, report
        )
    routes.vhost_transformations = transformations
    for index, route in enumerate(vhost.routes):
        routes.add(index, route)
    _check_jwt_steps(routes.extauth.configs.values(), jwt, report)
    if not vhost.routes:
        report.warning(
            "spec.virtualHost.routes", "the virtual host has no routes; it serves nothing"
        )
    source = routes.source  # the one its routes' origins name
    cors = (
        None
        if no_options
        else build_cors(options.cors, f"{_OPTIONS}.cors", report, route_level=False)
    )
    flows = routes.extauth.flow_routes(name)
    parts = _NO_PARTS if no_options else _parts(options, routes.ratelimit, vs.key, refs, report)
    return ir.VirtualHost(
        name=name,
        source=source,
        domains=domains,
        routes=(
            *flows,
            *merge_cors_policies(routes.routes, cors, options.cors_policy_merge_settings),
        ),
        transformations=transformations,
        headers=parts.headers,
        jwt=jwt.after,
        jwt_before_extauth=jwt.before,
        rbac=rbac,
        extauth=extauth,
        retries=parts.retries,
        cors=cors,
        ratelimit=parts.ratelimit,
        traffic=parts.traffic,
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HostParts:
    """What a virtual host's options make of it once its routes are built (None: nothing)."""

    headers: ir.HeaderManipulation | None = None
    retries: ir.RetryPolicy | None = None
    ratelimit: ir.RateLimits | None = None
    traffic: ir.HostTraffic | None = None


#: The parts of a host that sets no options.
_NO_PARTS = HostParts()


def sets_nothing(options: VirtualHostOptions) -> bool:
    """Whether `options` are those of a host that sets none: the shared empty value."""
    return options is _NO_OPTIONS


def _parts(
    options: VirtualHostOptions,
    ratelimit: RateLimitResolver,
    owner: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> HostParts:
    return HostParts(
        headers=build_header_manipulation(
            options.header_manipulation,
            f"{_OPTIONS}.headerManipulation",
            report,
            HeaderSecrets(refs, owner),
        ),
        retries=build_retries(options.retries, f"{_OPTIONS}.retries", report),
        ratelimit=ratelimit.resolve(options, _OPTIONS),
        traffic=build_host_traffic(options, _OPTIONS, refs=refs, owner=owner, report=report),
    )


def _check_jwt_steps(
    configs: Iterable[AuthConfigUse], jwt: HostJwt, report: ResourceReport
) -> None:
    """An AuthConfig's `jwt` step reads the tokens Envoy verified before the extauth call:
    with the host's JWT checks after it (`jwt`, `jwtStaged.afterExtAuth`), it never sees
    one, so say where the checks belong."""
    if jwt.before is not None:
        return
    for config in configs:
        if config.jwt_step:
            key = config.key
            report.warning(
                f"{_OPTIONS}.jwtStaged",
                f"AuthConfig {key.namespace}.{key.name} has a jwt step, which sees only "
                "tokens verified before extauth: put the JWT options under "
                "jwtStaged.beforeExtAuth",
            )


def _domains(domains: list[str], name: str, report: ResourceReport) -> tuple[str, ...]:
    if not domains:
        return ("*",)
    out: list[str] = []
    for i, domain in enumerate(domains):
        field = f"spec.virtualHost.domains[{i}]"
        if not domain.strip():
            report.error(field, f"virtual host {name} has an empty domain")
            continue
        stars = domain.count("*")
        if stars > 1 or (
            stars == 1 and domain != "*" and not (domain.startswith("*") or domain.endswith("*"))
        ):
            report.error(
                field,
                f"{domain!r}: a domain may hold one wildcard, at its start or "
                "its end (*.example.com, example.*)",
            )
            continue
        lowered = domain.lower()
        if lowered in out:
            report.error(field, f"domain {domain!r} is listed twice")
            continue
        out.append(lowered)
    return tuple(out)


def _security(
    options: VirtualHostOptions,
    vs: api.VirtualService,
    name: str,
    refs: Refs,
    report: ResourceReport,
    require_rbac: bool,
) -> tuple[HostJwt, ir.Rbac | None]:
    """The host's JWT checks (with its provider names, which route RBAC needs too) and its
    RBAC (an empty one denies all when Settings require RBAC)."""
    if sets_nothing(options):  # no JWT options: no checks, and no RBAC but the required one
        return _NO_JWT, ir.Rbac() if require_rbac else None
    jwt = build_host_jwt(
        options, field=_OPTIONS, vhost_name=name, referrer=vs.key, refs=refs, report=report
    )
    rbac = ir.Rbac() if require_rbac else None
    if options.rbac is not None:
        rbac = build_rbac(
            options.rbac, field=f"{_OPTIONS}.rbac", providers=jwt.providers, report=report
        )
    return jwt, None if rbac is None or rbac.disabled else rbac


def _port_variant(domain: str, domains: tuple[str, ...]) -> bool:
    base, colon, _ = domain.rpartition(":")
    return bool(colon) and base in domains


def check_domain_conflicts(
    built: dict[ResourceKey, Contribution], reports: Reports
) -> list[tuple[ListenerRole, str]]:
    """Two VirtualServices on one listener may not share a domain; both are rejected,
    as in the established gateway (the message names the other ones). TLS virtual hosts
    are exempt: each has its own filter chain and routes, told apart by SNI (tls.py).
    Runs once hosts are placed on listeners (gateways.py): the `:port` variants that
    `with_ports` added are left out, they clash exactly when their domain does.
    Returns the (listener role, domain) pairs in conflict."""
    claims: dict[tuple[ListenerRole, str], list[ResourceKey]] = defaultdict(list)
    for key, contribution in built.items():
        for role, vhost in contribution.virtual_hosts:
            for domain in vhost.domains if vhost.tls is None else ():
                if not _port_variant(domain, vhost.domains):
                    claims[(role, domain)].append(key)
    conflicts = []
    # Only the few claims in conflict are sorted (for the order of the findings).
    for (role, domain), keys in sorted(c for c in claims.items() if len(c[1]) > 1):
        conflicts.append((role, domain))
        for key in keys:
            others = ", ".join(f"{k.namespace}.{k.name}" for k in keys if k != key)
            reports.of(key).error(
                "spec.virtualHost.domains",
                f"domain conflict: the [{domain}] domain is present in other virtual services "
                f"that belong to the same Gateway as this one: [{others}]",
            )
    return conflicts
