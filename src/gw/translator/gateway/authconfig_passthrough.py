"""`passThroughAuth` → `gw.wire.extauth_passthrough.PassThroughAuth`: the service's address
(gRPC `host:port`, or an absolute HTTP(S) URL), timeouts and what goes to and comes from it.
`config` travels as JSON. TLS to the service is refused by name: gw connects in the clear
(to a `https` URL it speaks TLS with the system's CAs)."""

from __future__ import annotations

import json

from gw.api.authconfig_passthrough import PassThroughAuth, PassThroughGrpc, PassThroughHttp
from gw.translator.gateway.authstep import Needs, StepContext, milliseconds
from gw.wire import extauth_passthrough
from gw.wire.extauth_jwt import METADATA_NAMESPACE as JWT_NAMESPACE


def needs(passthrough: PassThroughAuth) -> Needs:
    http = passthrough.http
    if http is None:
        return Needs(headers=None, metadata=(JWT_NAMESPACE,))
    request = http.request
    headers = tuple(h.lower() for h in request.allowed_headers) if request else ()
    metadata = (JWT_NAMESPACE,) if request and request.pass_through_filter_metadata else ()
    return Needs(headers=headers, metadata=metadata)


def build(
    passthrough: PassThroughAuth, ctx: StepContext
) -> extauth_passthrough.PassThroughAuth | None:
    if (passthrough.grpc is None) == (passthrough.http is None):
        ctx.error("", "set exactly one of grpc or http")
        return None
    grpc = _grpc(passthrough.grpc, ctx) if passthrough.grpc else None
    http = _http(passthrough.http, ctx) if passthrough.http else None
    if grpc is None and http is None:
        return None
    return extauth_passthrough.PassThroughAuth(
        grpc=grpc,
        http=http,
        config_json=json.dumps(passthrough.config, sort_keys=True) if passthrough.config else "",
        failure_mode_allow=passthrough.failure_mode_allow,
    )


def _grpc(grpc: PassThroughGrpc, ctx: StepContext) -> extauth_passthrough.PassThroughGrpc | None:
    host, _, port = grpc.address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in host:
        ctx.error("grpc.address", f"{grpc.address!r} is not host:port")
        return None
    if grpc.tls_config is not None:
        ctx.not_supported("grpc.tlsConfig", "gw reaches passthrough services in the clear")
        return None
    retry = grpc.retry_policy
    backoff = retry.retry_back_off if retry else None
    base = milliseconds(backoff.base_interval if backoff else None, 1000)
    return extauth_passthrough.PassThroughGrpc(
        address=grpc.address,
        connection_timeout_ms=milliseconds(grpc.connection_timeout, 5000),
        retries=(1 if retry.num_retries is None else retry.num_retries) if retry else 0,
        retry_base_ms=base,
        retry_max_ms=milliseconds(backoff.max_interval if backoff else None, base * 10),
    )


def _http(http: PassThroughHttp, ctx: StepContext) -> extauth_passthrough.PassThroughHttp | None:
    ok = ctx.absolute_url("http.url", http.url)
    if http.tls_config is not None:
        ctx.not_supported("http.tlsConfig", "an https URL is reached with the system's CAs")
        ok = False
    request, response = http.request, http.response
    lists = (
        ("http.request.allowedHeaders", request.allowed_headers if request else []),
        ("http.request.headersToAdd", list(request.headers_to_add) if request else []),
    ) + tuple(
        (f"http.response.{name}", getattr(response, attr) if response else [])
        for name, attr in (
            ("allowedUpstreamHeaders", "allowed_upstream_headers"),
            ("allowedUpstreamHeadersToOverwrite", "allowed_upstream_headers_to_overwrite"),
            ("allowedClientHeadersOnDenied", "allowed_client_headers_on_denied"),
            ("allowedClientHeadersOnSuccess", "allowed_client_headers_on_success"),
        )
    )
    ok = all([ctx.header_names(field, names) for field, names in lists]) and ok
    if response is not None:
        both = set(response.allowed_upstream_headers) & set(
            response.allowed_upstream_headers_to_overwrite
        )
        if both:
            ctx.error(
                "http.response.allowedUpstreamHeadersToOverwrite",
                f"{', '.join(sorted(both))} also in allowedUpstreamHeaders: list a header in one",
            )
            ok = False
    pool = http.connection_pool
    if not ok:
        return None
    return extauth_passthrough.PassThroughHttp(
        url=http.url,
        connection_timeout_ms=milliseconds(http.connection_timeout, 5000),
        response_header_timeout_ms=milliseconds(http.response_header_timeout, 0),
        max_conns=(pool.max_conns or 100) if pool else 100,
        idle_timeout_ms=milliseconds(pool.idle_timeout if pool else None, 0),
        allowed_headers=_lower(request.allowed_headers if request else []),
        headers_to_add=tuple(sorted((k.lower(), v) for k, v in request.headers_to_add.items()))
        if request
        else (),
        pass_through_state=bool(request and request.pass_through_state),
        pass_through_filter_metadata=bool(request and request.pass_through_filter_metadata),
        pass_through_body=bool(request and request.pass_through_body),
        allowed_upstream_headers=_lower(response.allowed_upstream_headers if response else []),
        allowed_upstream_headers_to_overwrite=_lower(
            response.allowed_upstream_headers_to_overwrite if response else []
        ),
        allowed_client_headers_on_denied=_lower(
            response.allowed_client_headers_on_denied if response else []
        ),
        allowed_client_headers_on_success=_lower(
            response.allowed_client_headers_on_success if response else []
        ),
        read_state_from_response=bool(response and response.read_state_from_response),
    )


def _lower(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.lower() for n in names))
