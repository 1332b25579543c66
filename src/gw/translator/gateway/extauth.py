"""`extauth` on virtual hosts and routes, and the Settings that name the extauth server.

- `virtualHost.options.extauth.configRef` guards the whole host; a route's own `extauth`
  switches it off there (`disable: true`) or names another AuthConfig.
- The callback and logout paths of every AuthConfig a host uses get routes of their own,
  first in the host, so that they always reach the extauth server whatever the user's
  routes do (SPEC.md: a catch-all `/` also catches them; a host whose routes miss them, or
  that switches auth off on `/`, must still complete logins).
- Settings `extauth.extauthzServerRef` names the server's Upstream; a host that uses
  extauth without it is rejected (fail closed).
"""

from __future__ import annotations

from gw import api
from gw.api import ResourceKey
from gw.api.duration import duration_ms
from gw.api.extauth import ExtAuthExtension
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.authconfig import config_id, envoy_needs
from gw.translator.gateway.callbacks import flow_paths
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

SETTINGS_NAME = "default"
SERVER_FIELD = "spec.extauth.extauthzServerRef"
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
            self.report.error(
                f"{field}.customAuth",
                "customAuth is not supported by this gw build: name an AuthConfig in configRef",
            )
            return None
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
    """The server Settings name, and the key of those Settings (None, None without)."""
    for settings in snapshot.of_kind(api.Settings):
        meta = settings.metadata
        if (meta.namespace, meta.name) != (options.namespace, SETTINGS_NAME):
            continue
        extauth = settings.spec.extauth
        if extauth is None or extauth.extauthz_server_ref is None:
            return None, settings.key
        report = reports.of(settings.key)
        ref = extauth.extauthz_server_ref
        key = refs.key(api.Upstream, ref, settings.key)
        if refs.resolve(api.Upstream, ref, referrer=settings.key, field=SERVER_FIELD) is None:
            report.error(SERVER_FIELD, f"Upstream {key.namespace}.{key.name} not found")
        status = extauth.status_on_error
        if status is not None and status not in _ERROR_CODES:
            report.error(
                "spec.extauth.statusOnError",
                f"invalid statusOnError code: {status} (use a 4xx or 5xx code Envoy knows)",
            )
            status = None
        if extauth.failure_mode_allow:
            report.warning(
                "spec.extauth.failureModeAllow",
                "requests pass unauthenticated whenever the extauth server fails",
            )
        needs = envoy_needs(snapshot.of_kind(api.AuthConfig))
        server = ir.ExtAuthServer(
            cluster=cluster_name(key.name, key.namespace),
            timeout_ms=max(1, int(duration_ms(extauth.request_timeout))),
            failure_mode_allow=extauth.failure_mode_allow,
            status_on_error=status,
            request_headers=needs.headers,
            metadata_namespaces=needs.metadata,
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
    """Reject virtual services that use extauth when no server is configured, and tie
    the others to the Settings (rejected Settings reject them too)."""
    for vs in snapshot.of_kind(api.VirtualService):
        for field in _extauth_fields(vs):
            if server is None:
                where = (
                    f"Settings {settings.namespace}.{settings.name}"
                    if settings
                    else ("the Settings resource (gw-system.default)")
                )
                reports.of(vs.key).error(
                    field,
                    f"no extauth server reference configured: set {SERVER_FIELD} in {where}",
                )
            elif settings is not None:
                refs.link(vs.key, field, settings)


def _extauth_fields(vs: api.VirtualService) -> list[str]:
    """Fields of `vs` that send requests to the extauth server."""
    vhost = vs.spec.virtual_host
    if vhost is None:
        return []
    out = []
    if vhost.options and vhost.options.extauth and vhost.options.extauth.config_ref:
        out.append("spec.virtualHost.options.extauth.configRef")
    for i, route in enumerate(vhost.routes):
        if route.options and route.options.extauth and route.options.extauth.config_ref:
            out.append(f"spec.virtualHost.routes[{i}].options.extauth.configRef")
    return out
