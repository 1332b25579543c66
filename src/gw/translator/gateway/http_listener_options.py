"""A Gateway's `httpGateway.options` (besides `httpConnectionManagerSettings` and
`connectionLimit`) → `ir.HttpListenerOptions`, and the two of them that shape how the
listener speaks HTTP (`headerValidationSettings`, `leftmostXffAddress`) into its
`ir.HttpSettings`.

Each option has its builder (`listener_health.py`, `gzip.py`, `local_ratelimit.py`,
`stateful_session.py`; the listener's own servers through `extauth.py` and
`ratelimit.py`); this module calls them, and refuses by name, with the reason, every
established field gw does not build (`NOT_BUILT`). gRPC-Web is on unless `grpcWeb.disable`
(or, for gateways that say nothing, Settings `gloo.disableGrpcWeb`) switches it off, as in
the established gateway.
"""

from __future__ import annotations

import dataclasses

from gw.api import ResourceKey
from gw.api.http_listener_options import NOT_BUILT, HttpListenerOptions
from gw.translator import ir
from gw.translator.gateway.extauth import extauth_server
from gw.translator.gateway.grpc_json import build_grpc_json
from gw.translator.gateway.gzip import build_gzip
from gw.translator.gateway.listener_health import build_health_check
from gw.translator.gateway.local_ratelimit import build_listener_ratelimit
from gw.translator.gateway.ratelimit import ratelimit_server
from gw.translator.gateway.stateful_session import build_stateful_session
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

FIELD = "spec.httpGateway.options"


def build_http_listener_options(
    options: HttpListenerOptions | None,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
    *,
    grpc_web: bool = True,
) -> ir.HttpListenerOptions:
    """The listener's filters; `grpc_web` is the default for a gateway that does not say.
    Findings go to `report` (a value with errors is not served)."""
    if options is None:
        return ir.HttpListenerOptions(grpc_web=grpc_web)
    _refuse_unbuilt(options, report)
    health = options.health_check
    gzip = options.gzip
    local = options.http_local_ratelimit
    session = options.stateful_session
    router = options.router
    extauth = options.extauth
    if extauth is not None and extauth.extauthz_server_ref is None:
        report.error(
            f"{FIELD}.extauth.extauthzServerRef",
            "name the extauth server's Upstream (this gateway's extauth settings replace the "
            "Settings' whole)",
        )
    limits = options.ratelimit_server
    transcoder = options.grpc_json_transcoder
    if limits is not None and "rate_limit_before_auth" in limits.model_fields_set:
        report.warning(
            f"{FIELD}.ratelimitServer.rateLimitBeforeAuth",
            "no effect on one gateway: whether limits are checked before authentication is "
            "the Settings' ratelimitServer.rateLimitBeforeAuth, for every gateway",
        )
    return ir.HttpListenerOptions(
        health_check=build_health_check(health, report) if health else None,
        grpc_web=not options.grpc_web.disable if options.grpc_web else grpc_web,
        gzip=build_gzip(gzip, report) if gzip else None,
        local_ratelimit=build_listener_ratelimit(local, report) if local else None,
        stateful_session=build_stateful_session(session, report) if session else None,
        grpc_json=build_grpc_json(transcoder, report) if transcoder else None,
        router=ir.RouterSettings(
            suppress_envoy_headers=bool(router.suppress_envoy_headers),
            dynamic_stats=router.dynamic_stats,
        )
        if router
        else ir.RouterSettings(),
        extauth_server=(
            extauth_server(extauth, {}, owner, f"{FIELD}.extauth", refs, report)
            if extauth is not None and extauth.extauthz_server_ref is not None
            else None
        ),
        ratelimit_server=(
            ratelimit_server(limits, owner, f"{FIELD}.ratelimitServer", refs, report)
            if limits is not None
            else None
        ),
    )


def with_http_options(
    http: ir.HttpSettings, options: HttpListenerOptions | None, report: ResourceReport
) -> ir.HttpSettings:
    """`headerValidationSettings.disableHttp1MethodValidation`: HTTP/1 requests may use
    methods beyond the standard ones; `leftmostXffAddress`: the client is the leftmost
    address of `X-Forwarded-For`."""
    if options is None:
        return http
    validation = options.header_validation_settings
    custom_methods = bool(validation and validation.disable_http1_method_validation is not None)
    leftmost = bool(options.leftmost_xff_address)
    if leftmost and http.xff_num_trusted_hops:
        report.error(
            f"{FIELD}.leftmostXffAddress",
            "set either leftmostXffAddress or httpConnectionManagerSettings.xffNumTrustedHops: "
            "both say which X-Forwarded-For address is the client",
        )
    if not (custom_methods or leftmost):
        return http
    return dataclasses.replace(http, allow_custom_methods=custom_methods, leftmost_xff=leftmost)


def _refuse_unbuilt(options: HttpListenerOptions, report: ResourceReport) -> None:
    """Established fields gw does not build: refused by name when present at all
    (`buffer: {}` asks for a buffer with its defaults)."""
    data = options.model_dump(by_alias=True)
    for name, why in NOT_BUILT.items():
        if data.get(name) is not None:
            report.error(
                f"{FIELD}.{name}",
                f"httpGateway.options.{name} is not supported in gw: {why}; remove it (see "
                "docs/gateways.md for the options gw builds)",
            )
