"""`extauth` on virtual hosts and routes, and the Settings that name the auth servers.

- `virtualHost.options.extauth.configRef` guards the whole host; a route's own `extauth`
  switches it off there (`disable: true`) or names another AuthConfig. `customAuth` sends
  the requests to a custom server instead (Settings `extauth`, or one of `namedExtauth` by
  `name`), with its `contextExtensions` (`extauth_servers.py`).
- The callback and logout paths of every AuthConfig a host uses get routes of their own,
  first in the host, so that they always reach the extauth server whatever the user's
  routes do (SPEC.md: a catch-all `/` also catches them; a host whose routes miss them, or
  that switches auth off on `/`, must still complete logins).
- Settings `extauth.extauthzServerRef` names the server's Upstream; a host that uses
  extauth without it (or names a server `namedExtauth` lacks) is rejected (fail closed).
"""

from __future__ import annotations

from gw import api
from gw.api import ResourceKey
from gw.api.extauth import ExtAuthExtension
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.authconfig import config_id, envoy_needs
from gw.translator.gateway.callbacks import flow_paths
from gw.translator.gateway.extauth_servers import build_named, build_service, request_headers
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

SETTINGS_NAME = "default"
SERVER_FIELD = "spec.extauth.extauthzServerRef"
#: The cluster of a default server Settings do not name: requests sent there fail (403).
MISSING_SERVER = "gw-extauth-server-missing"
#: What the flow routes answer if a request ever got past the extauth server (it never
#: lets callback or logout requests through; with `failureModeAllow` a down server would).
FLOW_ROUTE_RESPONSE = ir.DirectResponse(
    status=503, body="the external auth server did not handle this request"
)
#: Envoy status codes `statusOnError` may take (`envoy.type.v3.StatusCode`).
_ERROR_CODES = frozenset(range(400, 432)) | frozenset(range(500, 512))


class ExtAuthResolver:
    """Resolves the `extauth` options of one VirtualService and remembers the AuthConfigs
    they name, for the flow routes."""

    def __init__(self, refs: Refs, referrer: ResourceKey, report: ResourceReport) -> None:
        self.refs = refs
        self.referrer = referrer
        self.report = report
        self.configs: dict[str, api.AuthConfig] = {}

    def resolve(self, extension: ExtAuthExtension, field: str) -> ir.ExtAuth | None:
        """The ExtAuth an `extauth` option asks for, or None after reporting why not."""
        chosen = [
            name
            for name, set_ in (
                ("disable", extension.disable),
                ("configRef", extension.config_ref is not None),
                ("customAuth", extension.custom_auth is not None),
            )
            if set_
        ]
        if len(chosen) != 1:
            self.report.error(field, "set exactly one of disable, configRef or customAuth")
            return None
        if extension.disable:
            return ir.ExtAuth(config_id=None)
        if extension.custom_auth is not None:
            custom = extension.custom_auth
            return ir.ExtAuth(
                config_id=None,
                custom=ir.CustomAuth(
                    name=custom.name or None,
                    context_extensions=tuple(sorted(custom.context_extensions.items())),
                ),
            )
        assert extension.config_ref is not None
        ref = extension.config_ref
        key = self.refs.key(api.AuthConfig, ref, self.referrer)
        found = self.refs.resolve(
            api.AuthConfig, ref, referrer=self.referrer, field=f"{field}.configRef"
        )
        if found is None:
            self.report.error(
                f"{field}.configRef", f"AuthConfig {key.namespace}.{key.name} not found"
            )
            return None
        ident = config_id(key.namespace, key.name)
        self.configs[ident] = found
        return ir.ExtAuth(config_id=ident)

    def flow_routes(self, vhost_name: str) -> list[ir.Route]:
        """Routes for the callback and logout paths of each OIDC login the AuthConfigs this
        VirtualService uses hold, each sent to the extauth server with its own config."""
        out: list[ir.Route] = []
        owner: dict[ir.RouteMatch, str] = {}
        for ident, auth_config in sorted(self.configs.items()):
            for entry in auth_config.spec.configs:
                oidc = entry.oauth2.oidc_authorization_code if entry.oauth2 else None
                for kind, match in flow_paths(oidc) if oidc is not None else []:
                    if owner.get(match) == ident:
                        continue
                    if match in owner:
                        self.report.error(
                            "spec.virtualHost.options.extauth",
                            f"AuthConfigs {owner[match]} and {ident} both use the path "
                            f"{match.path} on this host",
                        )
                        continue
                    owner[match] = ident
                    out.append(
                        ir.Route(
                            name=f"{vhost_name}-extauth-{kind}-{len(out)}",
                            match=match,
                            action=FLOW_ROUTE_RESPONSE,
                            extauth=ir.ExtAuth(config_id=ident),
                        )
                    )
        return out


def build_extauth_server(
    snapshot: Snapshot, options: Options, refs: Refs, reports: Reports
) -> tuple[ir.ExtAuthServer | None, ResourceKey | None]:
    """The servers Settings name, and the key of those Settings (None, None without)."""
    for settings in snapshot.of_kind(api.Settings):
        meta = settings.metadata
        if (meta.namespace, meta.name) != (options.namespace, SETTINGS_NAME):
            continue
        extauth, named_settings = settings.spec.extauth, settings.spec.named_extauth
        if (extauth is None or extauth.extauthz_server_ref is None) and not named_settings:
            return None, settings.key
        report = reports.of(settings.key)
        default = (
            build_service(extauth, "spec.extauth", settings.key, refs, report)
            if extauth is not None and extauth.extauthz_server_ref is not None
            else None
        )
        named = build_named(named_settings, extauth, settings.key, refs, report)
        status = extauth.status_on_error if extauth else None
        if status is not None and status not in _ERROR_CODES:
            report.error(
                "spec.extauth.statusOnError",
                f"invalid statusOnError code: {status} (use a 4xx or 5xx code Envoy knows)",
            )
            status = None
        if extauth is not None and extauth.failure_mode_allow:
            report.warning(
                "spec.extauth.failureModeAllow",
                "requests pass unauthenticated whenever the extauth server fails",
            )
        body = extauth.request_body if extauth else None
        needs = envoy_needs(snapshot.of_kind(api.AuthConfig))
        targets = {
            e.custom_auth.name or None
            for vs in snapshot.of_kind(api.VirtualService)
            for _, e in _extauth_fields(vs)
            if e.custom_auth is not None
        }
        headers, patterns = request_headers(needs.headers, targets, extauth, named_settings)
        server = ir.ExtAuthServer(
            cluster=default.cluster if default else MISSING_SERVER,
            timeout_ms=default.timeout_ms if default else 200,
            http=default.http if default else None,
            authority=default.authority if default else None,
            failure_mode_allow=bool(extauth and extauth.failure_mode_allow),
            status_on_error=status,
            max_request_bytes=(body.max_request_bytes or 4096) if body else None,
            allow_partial_message=bool(body and body.allow_partial_message),
            pack_as_bytes=bool(body and body.pack_as_bytes),
            clear_route_cache=bool(extauth and extauth.clear_route_cache),
            stat_prefix=extauth.stat_prefix if extauth else None,
            request_headers=headers,
            request_header_patterns=patterns,
            metadata_namespaces=needs.metadata,
            named=named,
        )
        return server, settings.key
    return None, None


def check_extauth_server(
    snapshot: Snapshot,
    server: ir.ExtAuthServer | None,
    settings: ResourceKey | None,
    refs: Refs,
    reports: Reports,
) -> None:
    """Reject virtual services that use a server Settings do not name, and tie the others
    to the Settings (rejected Settings reject them too)."""
    where = (
        f"Settings {settings.namespace}.{settings.name}"
        if settings
        else "the Settings resource (gw-system.default)"
    )
    named = dict(server.named) if server else {}
    for vs in snapshot.of_kind(api.VirtualService):
        for field, extension in _extauth_fields(vs):
            custom = extension.custom_auth
            problem = None
            if custom is not None and custom.name:
                if custom.name not in named:
                    known = ", ".join(sorted(named)) or "none"
                    problem = (
                        f"no auth server named {custom.name}: add it to spec.namedExtauth in "
                        f"{where} (named there: {known})"
                    )
            elif server is None or server.cluster == MISSING_SERVER:
                problem = f"no extauth server reference configured: set {SERVER_FIELD} in {where}"
            elif extension.config_ref is not None and server.http is not None:
                problem = (
                    f"spec.extauth in {where} uses httpService: gw's extauth server, which "
                    "runs AuthConfigs, speaks gRPC (use customAuth for an HTTP server)"
                )
            if problem is not None:
                reports.of(vs.key).error(field, problem)
            elif settings is not None:
                refs.link(vs.key, field, settings)


def _extauth_fields(vs: api.VirtualService) -> list[tuple[str, ExtAuthExtension]]:
    """The `extauth` options of `vs` that send requests to an auth server."""
    vhost = vs.spec.virtual_host
    if vhost is None:
        return []
    out = []
    options = [
        ("spec.virtualHost.options.extauth", vhost.options.extauth if vhost.options else None)
    ]
    for i, route in enumerate(vhost.routes):
        options.append(
            (
                f"spec.virtualHost.routes[{i}].options.extauth",
                route.options.extauth if route.options else None,
            )
        )
    for field, extension in options:
        if extension is None:
            continue
        if extension.config_ref is not None:
            out.append((f"{field}.configRef", extension))
        elif extension.custom_auth is not None:
            out.append((f"{field}.customAuth", extension))
    return out
