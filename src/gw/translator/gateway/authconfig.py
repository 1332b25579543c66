"""AuthConfigs → resolved auth configs (`gw.wire.extauth.AuthConfig`) for the extauth server.

Everything the server needs at run time is checked and filled in here, so that a mistake is
a status on the AuthConfig (naming the field) and never a login that fails at 3 a.m.: URLs
must be absolute, paths must start with `/`, the client secret is read from its OAuth
secret, the Redis address must be `host:port`, cookie and header names must be tokens.
This build runs one `oauth2.oidcAuthorizationCode` entry per AuthConfig; anything else is
refused (fail closed) rather than ignored.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from gw import api
from gw.api import ResourceKey
from gw.api.authconfig import OidcAuthorizationCode, OidcHeaders, UserSession
from gw.api.duration import duration_ms
from gw.api.secret import OAUTH_TYPE
from gw.snapshot import Snapshot
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.sessions import OIDC_FIELD, TOKEN, build_session
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport
from gw.wire import extauth, extauth_oidc

CLIENT_SECRET_KEY = "client-secret"
#: Parameters the server sets itself on the authorization request.
RESERVED_AUTH_PARAMS = frozenset(
    {
        "client_id",
        "code_challenge",
        "code_challenge_method",
        "nonce",
        "redirect_uri",
        "response_type",
        "scope",
        "state",
    }
)


def build_auth_configs(
    snapshot: Snapshot, refs: Refs, reports: Reports
) -> dict[ResourceKey, Contribution]:
    out: dict[ResourceKey, Contribution] = {}
    for auth_config in snapshot.of_kind(api.AuthConfig):
        report = reports.of(auth_config.key)
        built = build_auth_config(auth_config, refs, report)
        if built is not None and not report.errors:
            out[auth_config.key] = Contribution(auth_configs=(built,))
    return out


def config_id(namespace: str, name: str) -> str:
    """How Envoy names an AuthConfig to the server (`context_extensions.config_id`)."""
    return f"{namespace}.{name}"


def flow_paths(oidc: OidcAuthorizationCode) -> tuple[str, str | None]:
    """The request paths of the callback and the logout (the callback is where the
    identity provider sends the browser: `appUrl` + `callbackPath`)."""
    return urlsplit(redirect_uri(oidc)).path, oidc.logout_path or None


def redirect_uri(oidc: OidcAuthorizationCode) -> str:
    return oidc.app_url.rstrip("/") + oidc.callback_path


def build_auth_config(
    auth_config: api.AuthConfig, refs: Refs, report: ResourceReport
) -> extauth.AuthConfig | None:
    spec = auth_config.spec
    if spec.boolean_expr is not None:
        report.error("spec.booleanExpr", "booleanExpr is not supported by this gw build yet")
    if len(spec.configs) > 1:
        report.error(
            "spec.configs",
            f"this gw build runs one config per AuthConfig, not {len(spec.configs)}: "
            "split them into several AuthConfigs",
        )
    entry = spec.configs[0]
    oidc = entry.oauth2.oidc_authorization_code if entry.oauth2 else None
    if oidc is None:
        report.error(
            "spec.configs[0]",
            "only oauth2.oidcAuthorizationCode is supported by this gw build",
        )
        return None
    secret = _client_secret(oidc, auth_config.key, refs, report)
    checked = _check_oidc(oidc, report)
    session = build_session(oidc.session or UserSession(), report)
    if secret is None or not checked or session is None:
        return None
    callback, logout = flow_paths(oidc)
    override = oidc.discovery_override
    meta = auth_config.metadata
    headers = oidc.headers or OidcHeaders()
    poll = oidc.discovery_poll_interval
    return extauth.AuthConfig(
        config_id=config_id(meta.namespace, meta.name),
        namespace=meta.namespace,
        name=meta.name,
        oidc=extauth_oidc.OidcAuthorizationCode(
            app_url=oidc.app_url,
            callback_path=callback,
            redirect_uri=redirect_uri(oidc),
            client_id=oidc.client_id,
            client_secret=secret,
            issuer_url=oidc.issuer_url,
            auth_endpoint=override.auth_endpoint if override else None,
            token_endpoint=override.token_endpoint if override else None,
            jwks_uri=override.jwks_uri if override else None,
            discovery_poll_interval_ms=int(duration_ms(poll)) if poll else 1_800_000,
            scopes=tuple(dict.fromkeys(["openid", *oidc.scopes])),
            auth_endpoint_query_params=tuple(sorted(oidc.auth_endpoint_query_params.items())),
            token_endpoint_query_params=tuple(sorted(oidc.token_endpoint_query_params.items())),
            session=session,
            id_token_header=_lower(headers.id_token_header),
            access_token_header=_lower(headers.access_token_header),
            bearer_in_authorization=bool(headers.use_bearer_schema_for_authorization),
            logout_path=logout,
            after_logout_url=oidc.after_logout_url or oidc.app_url,
            fail_on_redirect=spec.fail_on_redirect,
        ),
    )


def _client_secret(
    oidc: OidcAuthorizationCode, referrer: ResourceKey, refs: Refs, report: ResourceReport
) -> str | None:
    """The client secret from its OAuth secret; "" for a public client."""
    field = f"{OIDC_FIELD}.clientSecretRef"
    if oidc.client_secret_ref is None:
        if oidc.disable_client_secret:
            return ""
        report.error(
            field,
            "required: name the OAuth secret that holds the client secret "
            "(or set disableClientSecret for a public client)",
        )
        return None
    ref = oidc.client_secret_ref
    secret = refs.resolve(api.Secret, ref, referrer=referrer, field=field)
    key = refs.key(api.Secret, ref, referrer)
    where = f"{key.namespace}.{key.name}"
    if secret is None:
        report.error(
            field,
            f"secret {where} not found: create it with `gwctl create secret oauth "
            f"--namespace {key.namespace} --name {key.name} --client-secret <value>`",
        )
        return None
    if secret.type != OAUTH_TYPE:
        report.error(field, f"secret {where} is of type {secret.type}, not {OAUTH_TYPE}")
        return None
    value = secret.value(CLIENT_SECRET_KEY)
    if not value:
        report.error(field, f"secret {where} has no {CLIENT_SECRET_KEY} value")
        return None
    return value


def _check_oidc(oidc: OidcAuthorizationCode, report: ResourceReport) -> bool:
    """True when every field the server acts on is usable (each problem is reported)."""
    checks = (_check_urls(oidc, report), _check_paths(oidc, report), _check_names(oidc, report))
    return all(checks)


def _check_urls(oidc: OidcAuthorizationCode, report: ResourceReport) -> bool:
    urls = [("appUrl", oidc.app_url), ("issuerUrl", oidc.issuer_url)]
    if oidc.after_logout_url and not oidc.after_logout_url.startswith("/"):
        urls.append(("afterLogoutUrl", oidc.after_logout_url))
    override = oidc.discovery_override
    if override is not None:
        urls += [
            (f"discoveryOverride.{name}", value)
            for name, value in (
                ("authEndpoint", override.auth_endpoint),
                ("tokenEndpoint", override.token_endpoint),
                ("jwksUri", override.jwks_uri),
            )
            if value is not None
        ]
    return all([_absolute_url(url, f"{OIDC_FIELD}.{name}", report) for name, url in urls])


def _check_paths(oidc: OidcAuthorizationCode, report: ResourceReport) -> bool:
    ok = True
    for name, path in (("callbackPath", oidc.callback_path), ("logoutPath", oidc.logout_path)):
        if path is not None and (not path.startswith("/") or "?" in path or "#" in path):
            report.error(f"{OIDC_FIELD}.{name}", f"{path!r} must be a path starting with /")
            ok = False
    if oidc.logout_path and oidc.logout_path == oidc.callback_path:
        report.error(f"{OIDC_FIELD}.logoutPath", "must differ from callbackPath")
        ok = False
    return ok


def _check_names(oidc: OidcAuthorizationCode, report: ResourceReport) -> bool:
    """The client id, scopes, extra query parameters and header names."""
    ok = True
    if not oidc.client_id.strip():
        report.error(f"{OIDC_FIELD}.clientId", "required: the client id at the identity provider")
        ok = False
    for i, scope in enumerate(oidc.scopes):
        if not scope or any(c.isspace() for c in scope):
            report.error(f"{OIDC_FIELD}.scopes[{i}]", f"{scope!r} is not a scope")
            ok = False
    for param in sorted(set(oidc.auth_endpoint_query_params) & RESERVED_AUTH_PARAMS):
        report.error(
            f"{OIDC_FIELD}.authEndpointQueryParams.{param}",
            f"{param} is set by the extauth server itself (state, nonce and PKCE are built in)",
        )
        ok = False
    headers = oidc.headers
    for name, value in (
        ("idTokenHeader", headers.id_token_header if headers else None),
        ("accessTokenHeader", headers.access_token_header if headers else None),
    ):
        if value is not None and not TOKEN.match(value):
            report.error(f"{OIDC_FIELD}.headers.{name}", f"{value!r} is not a header name")
            ok = False
    return ok


def _lower(header: str | None) -> str | None:
    return header.lower() if header else None


def _absolute_url(url: str, field: str, report: ResourceReport) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        report.error(field, f"{url!r} is not an absolute http(s) URL")
        return False
    return True
