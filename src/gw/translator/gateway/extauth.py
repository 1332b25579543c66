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
  `SERVER` is this server's kind for `servers.py`, which does that for every server alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from gw import api
from gw.api import ResourceKey
from gw.api.extauth import ExtAuthExtension
from gw.api.settings import ExtAuthSettings
from gw.translator import ir
from gw.translator.gateway.authconfig import config_id, envoy_needs
from gw.translator.gateway.callbacks import flow_paths
from gw.translator.gateway.extauth_http import build_http_checks
from gw.translator.gateway.extauth_pass import check_ttl
from gw.translator.gateway.extauth_servers import build_named, build_service, request_headers
from gw.translator.gateway.servers import (
    OptionBlock,
    OptionBlocks,
    ServerKind,
    option_blocks,
    options_field,
)
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

SERVER_FIELD = "spec.extauth.extauthzServerRef"
#: What the flow routes answer if a request ever got past the extauth server (it never
#: lets callback or logout requests through; with `failureModeAllow` a down server would).
FLOW_ROUTE_RESPONSE = ir.DirectResponse(
    status=503, body="the external auth server did not handle this request"
)
#: Envoy status codes `statusOnError` may take (`envoy.type.v3.StatusCode`).
_ERROR_CODES = frozenset(range(400, 432)) | frozenset(range(500, 512))


@dataclass(frozen=True, slots=True)
class AuthConfigUse:
    """What a host reads of an AuthConfig it names (`auth_config_use`): the matches of its
    OIDC logins' own requests (callback, logout), which get routes in the host, and whether
    a step reads a JWT (the host's checks must come before it). The host is looked up
    through this view: a new client secret, scope or provider leaves the thousands of
    hosts that name the AuthConfig as they were (its config for the extauth server is
    built by its own pass)."""

    key: ResourceKey
    flows: tuple[tuple[str, ir.RouteMatch], ...] = ()
    jwt_step: bool = False


def auth_config_use(auth_config: object) -> AuthConfigUse | None:
    if not isinstance(auth_config, api.AuthConfig):
        return None
    flows = []
    for entry in auth_config.spec.configs:
        oidc = entry.oauth2.oidc_authorization_code if entry.oauth2 else None
        if oidc is not None:
            flows += flow_paths(oidc)
    jwt_step = any(step.jwt is not None for step in auth_config.spec.configs)
    return AuthConfigUse(auth_config.key, tuple(flows), jwt_step)


class ExtAuthResolver:
    """Resolves the `extauth` options of one VirtualService and remembers what it read of
    the AuthConfigs they name, for the flow routes."""

    def __init__(self, refs: Refs, referrer: ResourceKey, report: ResourceReport) -> None:
        self.refs = refs
        self.referrer = referrer
        self.report = report
        self.configs: dict[str, AuthConfigUse] = {}

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
        found = self.refs.resolve_view(
            api.AuthConfig,
            ref,
            referrer=self.referrer,
            field=f"{field}.configRef",
            view=auth_config_use,
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
        if not self.configs:
            return []  # it uses no AuthConfig (most hosts)
        out: list[ir.Route] = []
        owner: dict[ir.RouteMatch, str] = {}
        for ident, use in sorted(self.configs.items(), key=lambda item: item[0]):
            for kind, match in use.flows:
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
                        extauth=ir.ExtAuth(config_id=ident, flow=kind),
                    )
                )
        return out


def build_extauth_server(
    settings: api.Settings, refs: Refs, report: ResourceReport
) -> ir.ExtAuthServer | None:
    """The servers the Settings' `extauth` and `namedExtauth` name (None without either);
    `cluster` None when only named ones are."""
    extauth, named_settings = settings.spec.extauth, settings.spec.named_extauth
    if (extauth is None or extauth.extauthz_server_ref is None) and not named_settings:
        return None
    check_ttl(extauth, "spec.extauth", report)
    return extauth_server(extauth, named_settings, settings.key, "spec.extauth", refs, report)


def extauth_server(
    extauth: ExtAuthSettings | None,
    named_settings: dict[str, ExtAuthSettings],
    owner: ResourceKey,
    field: str,
    refs: Refs,
    report: ResourceReport,
) -> ir.ExtAuthServer:
    """How Envoy calls the servers an `extauth` block (at `field` of `owner`) and named
    ones describe: the Settings', or a Gateway's own (`httpGateway.options.extauth`)."""
    default = (
        build_service(extauth, field, owner, refs, report)
        if extauth is not None and extauth.extauthz_server_ref is not None
        else None
    )
    named = build_named(named_settings, extauth, owner, refs, report)
    if extauth is not None and extauth.session_pass is not None and field != "spec.extauth":
        report.warning(
            f"{field}.sessionPass",
            "not supported here: session passes are set in the Settings' extauth (a "
            "Gateway's own extauth server is asked over gRPC, which passes do not cover)",
        )
    status = extauth.status_on_error if extauth else None
    if status is not None and status not in _ERROR_CODES:
        report.error(
            f"{field}.statusOnError",
            f"invalid statusOnError code: {status} (use a 4xx or 5xx code Envoy knows)",
        )
        status = None
    if extauth is not None and extauth.failure_mode_allow:
        report.warning(
            f"{field}.failureModeAllow",
            "requests pass unauthenticated whenever the extauth server fails",
        )
    body = extauth.request_body if extauth else None
    needs = envoy_needs(refs.of_kind(api.AuthConfig))
    targets = set(refs.drawn(api.VirtualService, _custom_auth_targets))
    headers, patterns = request_headers(needs.headers, targets, extauth, named_settings)
    return ir.ExtAuthServer(
        cluster=default.cluster if default else None,
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
        http_checks=build_http_checks(extauth, owner, refs) if default else None,
    )


def attach_extauth_server(vhost: ir.VirtualHost, server: ir.ExtAuthServer | None) -> ir.VirtualHost:
    if not vhost.uses_extauth or vhost.extauth_server == server:
        return vhost
    return dataclasses.replace(vhost, extauth_server=server)


def grpc_clusters(server: ir.ExtAuthServer) -> frozenset[str]:
    """The clusters of the servers that speak gRPC (HTTP/2 whatever their Upstream says)."""
    services = [server.default, *(s for _, s in server.named)]
    return frozenset(s.cluster for s in services if s is not None and s.http is None)


def _default_server_fields(blocks: OptionBlocks) -> list[str]:
    """Fields that send requests to Settings' `extauth` server (gw's extauth server for
    `configRef`, or a custom one for `customAuth` without a name)."""
    return [
        field
        for field, e in _extauth_options(blocks)
        if e.config_ref is not None or (e.custom_auth is not None and not e.custom_auth.name)
    ]


def _other_uses(
    blocks: OptionBlocks, server: ir.ExtAuthServer | None
) -> list[tuple[str, str | None]]:
    """Fields that use a named server (or use the default one in a way it cannot serve),
    each with what is wrong (None: nothing)."""
    named = dict(server.named) if server else {}
    out: list[tuple[str, str | None]] = []
    for field, e in _extauth_options(blocks):
        if e.custom_auth is not None and e.custom_auth.name:
            name = e.custom_auth.name
            known = ", ".join(sorted(named)) or "none"
            out.append(
                (
                    field,
                    None
                    if name in named
                    else (
                        f"no auth server named {name}: add it to spec.namedExtauth (named there: "
                        f"{known})"
                    ),
                )
            )
        elif e.config_ref is not None and server is not None and server.http is not None:
            out.append(
                (
                    field,
                    "spec.extauth uses httpService: gw's extauth server, which runs "
                    "AuthConfigs, speaks gRPC (use customAuth for an HTTP server)",
                )
            )
    return out


def _custom_auth_targets(vs: api.VirtualService) -> frozenset[Hashable]:
    """The servers `vs`'s `customAuth` options call: a name, or None for Settings'
    `extauth` (a tally's draw: `refs.drawn`)."""
    return frozenset(
        e.custom_auth.name or None
        for _, e in _extauth_options(option_blocks(vs))
        if e.custom_auth is not None
    )


def _extauth_options(blocks: Iterable[OptionBlock]) -> list[tuple[str, ExtAuthExtension]]:
    """The `extauth` options of the blocks that send requests to an auth server, by field."""
    out = []
    for index, options in blocks:
        extension = options.extauth
        if extension is None:
            continue
        if extension.config_ref is not None:
            out.append((f"{options_field(index)}.extauth.configRef", extension))
        elif extension.custom_auth is not None:
            out.append((f"{options_field(index)}.extauth.customAuth", extension))
    return out


SERVER = ServerKind(
    field=SERVER_FIELD,
    missing="no extauth server reference configured",
    build=build_extauth_server,
    needs=_default_server_fields,
    attach=attach_extauth_server,
    more=_other_uses,
    grpc_clusters=grpc_clusters,
)
