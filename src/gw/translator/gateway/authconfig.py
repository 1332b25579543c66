"""AuthConfigs → resolved auth configs (`gw.wire.extauth.AuthConfig`) for the extauth server.

Each `spec.configs[]` entry is one kind of check; `KINDS` says, per kind, where it sits in
the entry, which module builds its wire type (`authconfig_<kind>.py`) and what Envoy must
send the server for it, or why gw does not run it (the AuthConfig is then rejected, naming
the field: fail closed rather than ignore). Entries are named (`config_<index>` unless
`name` says otherwise) for `booleanExpr`, which is parsed here with the server's own parser
so that a mistake is a status. A new kind is one line in `KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gw import api
from gw.api import ResourceKey
from gw.api.authconfig import AuthConfigEntry
from gw.snapshot import Snapshot
from gw.translator.gateway import (
    authconfig_accesstoken,
    authconfig_apikey,
    authconfig_basic,
    authconfig_ldap,
    authconfig_oidc,
    authconfig_opa,
    authconfig_passthrough,
)
from gw.translator.gateway.authstep import Needs, StepContext
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.extauth_pass import with_pass
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport
from gw.wire import extauth, extauth_expr, extauth_jwt

#: Settings `extauth.userIdHeader` when it is not set (the established install's value).
DEFAULT_USER_ID_HEADER = "x-user-id"
NOT_YET = "this gw build does not run it yet"


@dataclass(frozen=True, slots=True)
class Kind:
    field: str
    model: Callable[[AuthConfigEntry], Any]
    build: Callable[[Any, StepContext], extauth.Check | None] | None = None
    needs: Callable[[Any], Needs] | None = None
    #: Why gw refuses the kind (when it has no `build`).
    why: str = NOT_YET


def _oauth2(name: str) -> Callable[[AuthConfigEntry], Any]:
    return lambda e: getattr(e.oauth2, name) if e.oauth2 is not None else None


KINDS: tuple[Kind, ...] = (
    Kind(
        "oauth2.oidcAuthorizationCode",
        _oauth2("oidc_authorization_code"),
        authconfig_oidc.build,
        authconfig_oidc.needs,
    ),
    Kind("basicAuth", lambda e: e.basic_auth, authconfig_basic.build, authconfig_basic.needs),
    Kind("apiKeyAuth", lambda e: e.api_key_auth, authconfig_apikey.build, authconfig_apikey.needs),
    Kind(
        "passThroughAuth",
        lambda e: e.pass_through_auth,
        authconfig_passthrough.build,
        authconfig_passthrough.needs,
    ),
    Kind(
        "jwt",
        lambda e: e.jwt,
        lambda _, ctx: extauth_jwt.JwtStep(),
        lambda _: Needs(metadata=(extauth_jwt.METADATA_NAMESPACE,)),
    ),
    Kind(
        "oauth2.accessTokenValidation",
        _oauth2("access_token_validation"),
        authconfig_accesstoken.build,
        authconfig_accesstoken.needs,
    ),
    Kind("opaAuth", lambda e: e.opa_auth, authconfig_opa.build, authconfig_opa.needs),
    Kind("ldap", lambda e: e.ldap, authconfig_ldap.build, authconfig_ldap.needs),
    Kind("oauth2.oauth2", _oauth2("oauth2"), why="use oauth2.oidcAuthorizationCode"),
    Kind("oauth", lambda e: e.oauth, why="it is deprecated: use oauth2.oidcAuthorizationCode"),
    Kind("pluginAuth", lambda e: e.plugin_auth, why="gw loads no plugins: use passThroughAuth"),
    Kind(
        "opaServerAuth",
        lambda e: e.opa_server_auth,
        why="gw runs no OPA server: evaluate the same Rego modules with opaAuth",
    ),
    Kind("hmacAuth", lambda e: e.hmac_auth),
    Kind("portalAuth", lambda e: e.portal_auth, why="gw has no developer portal"),
)


def build_auth_configs(
    snapshot: Snapshot,
    settings: api.Settings | None,
    refs: Refs,
    reports: Reports,
    pass_key: bytes | None = None,
) -> dict[ResourceKey, Contribution]:
    """`settings`: the Settings read (their `extauth.userIdHeader` and `sessionPass`);
    `pass_key`: the control plane's session pass key."""
    extauth = settings.spec.extauth if settings is not None else None
    user_id_header = (
        (extauth.user_id_header if extauth else None) or DEFAULT_USER_ID_HEADER
    ).lower()
    out: dict[ResourceKey, Contribution] = {}
    for auth_config in snapshot.of_kind(api.AuthConfig):
        report = reports.of(auth_config.key)
        built = build_auth_config(auth_config, refs, report, user_id_header)
        if built is not None and not report.errors:
            built = with_pass(built, auth_config, extauth, pass_key)
            out[auth_config.key] = Contribution(auth_configs=(built,))
    return out


def config_id(namespace: str, name: str) -> str:
    """How Envoy names an AuthConfig to the server (`context_extensions.config_id`)."""
    return f"{namespace}.{name}"


def step_name(entry: AuthConfigEntry, index: int) -> str:
    return entry.name if entry.name else f"config_{index}"


def kind_of(entry: AuthConfigEntry) -> list[tuple[Kind, Any]]:
    """The kinds an entry sets (exactly one, when it is right), with their models."""
    return [(kind, model) for kind in KINDS if (model := kind.model(entry)) is not None]


def envoy_needs(auth_configs: list[api.AuthConfig]) -> Needs:
    """What Envoy must send the extauth server for these AuthConfigs: the union of their
    entries' needs (headers None as soon as one needs every header)."""
    headers: set[str] | None = set()
    metadata: set[str] = set()
    for auth_config in auth_configs:
        for entry in auth_config.spec.configs:
            for kind, model in kind_of(entry):
                if kind.needs is None:
                    continue
                needed = kind.needs(model)
                metadata.update(needed.metadata)
                if headers is not None and needed.headers is not None:
                    headers.update(needed.headers)
                else:
                    headers = None
    return Needs(
        headers=None if headers is None else tuple(sorted(headers)),
        metadata=tuple(sorted(metadata)),
    )


def build_auth_config(
    auth_config: api.AuthConfig, refs: Refs, report: ResourceReport, user_id_header: str | None
) -> extauth.AuthConfig | None:
    spec = auth_config.spec
    steps: list[extauth.Step] = []
    names: dict[str, int] = {}
    for index, entry in enumerate(spec.configs):
        field = f"spec.configs[{index}]"
        name = step_name(entry, index)
        if not extauth_expr.NAME.fullmatch(name):
            report.error(f"{field}.name", f"{name!r} may hold only letters, digits, _ . -")
        elif name in names:
            report.error(f"{field}.name", f"{name} is also the name of configs[{names[name]}]")
        names.setdefault(name, index)
        check = _build_step(entry, field, auth_config, refs, report)
        if check is not None:
            steps.append(extauth.Step(name=name, check=check))
    _check_expression(spec.boolean_expr, set(names), report)
    if report.errors or len(steps) != len(spec.configs):
        return None
    meta = auth_config.metadata
    return extauth.AuthConfig(
        config_id=config_id(meta.namespace, meta.name),
        namespace=meta.namespace,
        name=meta.name,
        steps=tuple(steps),
        boolean_expr=spec.boolean_expr,
        user_id_header=user_id_header,
    )


def _build_step(
    entry: AuthConfigEntry,
    field: str,
    auth_config: api.AuthConfig,
    refs: Refs,
    report: ResourceReport,
) -> extauth.Check | None:
    found = kind_of(entry)
    if len(found) != 1:
        set_ = ", ".join(kind.field for kind, _ in found) or "none"
        report.error(
            field, f"set exactly one kind of check (basicAuth, apiKeyAuth, ...); set: {set_}"
        )
        return None
    kind, model = found[0]
    if kind.build is None:
        report.error(f"{field}.{kind.field}", f"{kind.field} is not supported: {kind.why}")
        return None
    return kind.build(model, StepContext(auth_config, f"{field}.{kind.field}", refs, report))


def _check_expression(expr: str | None, names: set[str], report: ResourceReport) -> None:
    if expr is None:
        return
    try:
        tree = extauth_expr.parse(expr, names)
    except extauth_expr.ExprError as exc:
        report.error("spec.booleanExpr", f"{expr!r} {exc}")
        return
    for name in sorted(names - extauth_expr.referenced(tree)):
        report.warning("spec.booleanExpr", f"does not name config {name}: it never runs")
