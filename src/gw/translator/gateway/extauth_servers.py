"""The auth servers Settings name: `extauth` (the default: gw's extauth server, or a custom
one) and `namedExtauth` (custom servers that `customAuth.name` picks per host or route).

Each is an Upstream (`extauthzServerRef`) spoken to over gRPC (Envoy's `Authorization`
service), or over HTTP with `httpService`. A named server is reached through the same Envoy
filter as the default one (the route names its service), so the filter-wide settings
(`failureModeAllow`, `statusOnError`, `requestBody`, `clearRouteCache`, `statPrefix`,
`userIdHeader`) are the default's: a named server that sets them differently is refused by
name. A gRPC server's cluster speaks HTTP/2, whatever its Upstream says (`servers.py`).
"""

from __future__ import annotations

from gw import api
from gw.api import ResourceKey
from gw.api.duration import duration_ms
from gw.api.settings import ExtAuthHttpService, ExtAuthSettings
from gw.translator import ir
from gw.translator.gateway.authstep import TOKEN
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.regex import RegexError, capture_groups
from gw.translator.reports import ResourceReport

#: What an HTTP check is made of: Envoy sends it only when the header list names it.
REQUEST_LINE = (":authority", ":method", ":path", "host")
#: Filter-wide settings a named server cannot set differently (field, attribute).
_FILTER_WIDE = (
    ("failureModeAllow", "failure_mode_allow"),
    ("statusOnError", "status_on_error"),
    ("requestBody", "request_body"),
    ("clearRouteCache", "clear_route_cache"),
    ("statPrefix", "stat_prefix"),
    ("userIdHeader", "user_id_header"),
)


def build_service(
    settings: ExtAuthSettings,
    field: str,
    key: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> ir.AuthService | None:
    """The server `settings` (at `field` of Settings `key`) describe, or None (reported)."""
    ref = settings.extauthz_server_ref
    if ref is None:
        report.error(f"{field}.extauthzServerRef", "required: the Upstream of the auth server")
        return None
    target = refs.key(api.Upstream, ref, key)
    upstream = refs.resolve(api.Upstream, ref, referrer=key, field=f"{field}.extauthzServerRef")
    if upstream is None:
        report.error(
            f"{field}.extauthzServerRef", f"Upstream {target.namespace}.{target.name} not found"
        )
    if settings.transport_api_version not in (None, "V3"):
        report.error(f"{field}.transportApiVersion", "only V3 exists")
    if settings.http_service is not None and settings.grpc_service is not None:
        report.error(field, "set either httpService or grpcService, not both")
    http = _http(settings.http_service, f"{field}.httpService", report)
    return ir.AuthService(
        cluster=cluster_name(target.name, target.namespace),
        timeout_ms=max(1, int(duration_ms(settings.request_timeout))),
        http=http,
        authority=settings.grpc_service.authority if settings.grpc_service else None,
    )


def build_named(
    named: dict[str, ExtAuthSettings],
    default: ExtAuthSettings | None,
    key: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> tuple[tuple[str, ir.AuthService], ...]:
    out = []
    for name, settings in sorted(named.items()):
        field = f"spec.namedExtauth.{name}"
        for camel, attr in _FILTER_WIDE:
            value = getattr(settings, attr)
            if value not in (None, False) and value != getattr(default, attr, None):
                report.error(
                    f"{field}.{camel}",
                    f"{camel} is not supported on a named server: the one Envoy filter uses "
                    "the value of spec.extauth",
                )
        service = build_service(settings, field, key, refs, report)
        if service is not None:
            out.append((name, service))
    return tuple(out)


def request_headers(
    needs: tuple[str, ...] | None,
    targets: set[str | None],
    default: ExtAuthSettings | None,
    named: dict[str, ExtAuthSettings],
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """The request headers Envoy sends the servers (None: all) and header patterns: what
    the AuthConfigs read (`needs`), plus what the custom servers `customAuth` uses
    (`targets`: None for Settings `extauth`, else a name) get: an HTTP server with
    `request.allowedHeaders`/`allowedHeadersRegex` those (and the request line, which an
    HTTP check is made of), any other custom server every header. Envoy has one list for
    all the servers its filter calls: each gets the union."""
    if needs is None:
        return None, ()
    headers, patterns = set(needs), []
    for target in targets:
        settings = default if target is None else named.get(target)
        http = settings.http_service if settings is not None else None
        request = http.request if http is not None else None
        if request is None or not (request.allowed_headers or request.allowed_headers_regex):
            return None, ()
        headers.update(h.lower() for h in request.allowed_headers)
        headers.update(REQUEST_LINE)
        patterns += request.allowed_headers_regex
    return tuple(sorted(headers)), tuple(dict.fromkeys(patterns))


def _http(
    http: ExtAuthHttpService | None, field: str, report: ResourceReport
) -> ir.HttpAuthService | None:
    if http is None:
        return None
    if http.path_prefix and not http.path_prefix.startswith("/"):
        report.error(f"{field}.pathPrefix", f"{http.path_prefix!r} must start with /")
    request, response = http.request, http.response
    names = {
        "request.allowedHeaders": request.allowed_headers if request else [],
        "request.headersToAdd": list(request.headers_to_add) if request else [],
        "response.allowedUpstreamHeaders": response.allowed_upstream_headers if response else [],
        "response.allowedClientHeaders": response.allowed_client_headers if response else [],
        "response.allowedUpstreamHeadersToAppend": (
            response.allowed_upstream_headers_to_append if response else []
        ),
    }
    for where, headers in names.items():
        for i, header in enumerate(headers):
            if not TOKEN.match(header):
                report.error(f"{field}.{where}[{i}]", f"{header!r} is not a header name")
    for i, pattern in enumerate(request.allowed_headers_regex if request else []):
        try:
            capture_groups(pattern)
        except RegexError as exc:
            report.error(f"{field}.request.allowedHeadersRegex[{i}]", str(exc))
    return ir.HttpAuthService(
        path_prefix=http.path_prefix,
        headers_to_add=tuple(sorted(request.headers_to_add.items())) if request else (),
        allowed_upstream_headers=_lower(names["response.allowedUpstreamHeaders"]),
        allowed_upstream_headers_to_append=_lower(names["response.allowedUpstreamHeadersToAppend"]),
        allowed_client_headers=_lower(names["response.allowedClientHeaders"]),
    )


def _lower(headers: list[str]) -> tuple[str, ...]:
    return tuple(h.lower() for h in headers)
