"""`oauth2.oidcAuthorizationCode` → `gw.wire.extauth_oidc.OidcAuthorizationCode`.

Everything the server needs at run time is checked and filled in here, so that a mistake is
a status on the AuthConfig (naming the field) and never a login that fails at 3 a.m.: URLs
must be absolute (an `issuerUrl` without a scheme means https, with a warning), paths must
start with `/`, the client secret is read from its OAuth secret, header names must be
tokens. Sessions are `sessions.py`'s. PKCE (S256, a new verifier per login) is always on;
a static `code_challenge`/`code_verifier` pair in the query parameters, as older guides
show, is dropped with a warning.
"""

from __future__ import annotations

from gw.api.authconfig_oidc import (
    DiscoveryOverride,
    OidcAuthorizationCode,
    OidcHeaders,
    TokenClaims,
    UserSession,
)
from gw.api.secret import OAUTH_TYPE
from gw.translator.gateway.authstep import TOKEN, Needs, StepContext, milliseconds, secret_value
from gw.translator.gateway.callbacks import callback_path, check_paths, redirect_uri
from gw.translator.gateway.sessions import build_session
from gw.wire import extauth_oidc

CLIENT_SECRET_KEY = "client-secret"
#: `autoMapFromMetadata` without a namespace reads this one.
AUTO_MAP_NAMESPACE = "vendor_authconfig_oidc"
#: Parameters the server sets itself on the authorization request.
RESERVED_AUTH_PARAMS = frozenset(
    {"client_id", "nonce", "redirect_uri", "response_type", "scope", "state"}
)
#: A static PKCE pair: gw makes a new one per login instead.
PKCE_PARAMS = frozenset({"code_challenge", "code_challenge_method", "code_verifier"})
_UNUSED_DISCOVERY = ("scopes", "responseTypes", "subjects", "claims")


def needs(oidc: OidcAuthorizationCode) -> Needs:
    auto_map = oidc.auto_map_from_metadata
    return Needs(
        headers=("cookie",),
        metadata=((auto_map.namespace or AUTO_MAP_NAMESPACE),) if auto_map else (),
    )


def build(
    oidc: OidcAuthorizationCode, ctx: StepContext
) -> extauth_oidc.OidcAuthorizationCode | None:
    issuer = _issuer(oidc.issuer_url, ctx)
    secret = _client_secret(oidc, ctx)
    checks = (_check_urls(oidc, ctx), check_paths(oidc, ctx), _check_names(oidc, ctx))
    _refuse_unsupported(oidc, ctx)
    session = build_session(oidc.session or UserSession(), oidc.session_id_header_name, ctx)
    if secret is None or not all(checks) or session is None or issuer is None:
        return None
    override = oidc.discovery_override or DiscoveryOverride()
    headers = oidc.headers or OidcHeaders()
    policy = oidc.jwks_cache_refresh_policy
    limit = policy.max_idp_req_per_polling_interval if policy else None
    auto_map = oidc.auto_map_from_metadata
    end_session = oidc.end_session_properties
    return extauth_oidc.OidcAuthorizationCode(
        app_url=oidc.app_url,
        callback_path=callback_path(oidc),
        callback_path_regex=oidc.parse_callback_path_as_regex,
        redirect_uri=redirect_uri(oidc),
        client_id=oidc.client_id,
        client_secret=secret,
        issuer_url=issuer,
        auth_endpoint=override.auth_endpoint,
        token_endpoint=override.token_endpoint,
        jwks_uri=override.jwks_uri,
        discovery_poll_interval_ms=milliseconds(oidc.discovery_poll_interval, 1_800_000),
        jwks_refresh="always"
        if policy and policy.always is not None
        else ("limited" if limit else "never"),
        jwks_refresh_limit=limit or 0,
        id_token_algs=tuple(override.id_token_algs),
        auth_methods=tuple(override.auth_methods),
        scopes=tuple(dict.fromkeys(["openid", *oidc.scopes])),
        auth_endpoint_query_params=_params(oidc.auth_endpoint_query_params),
        token_endpoint_query_params=_params(oidc.token_endpoint_query_params),
        session=session,
        id_token_header=_lower(headers.id_token_header),
        access_token_header=_lower(headers.access_token_header),
        bearer_in_authorization=bool(headers.use_bearer_schema_for_authorization),
        identity_token_claims=_claims(oidc.identity_token),
        access_token_claims=_claims(oidc.access_token),
        dynamic_metadata_from_claims=tuple(sorted(oidc.dynamic_metadata_from_claims.items())),
        logout_path=oidc.logout_path or None,
        after_logout_url=oidc.after_logout_url or oidc.app_url,
        revocation_endpoint=override.revocation_endpoint,
        end_session_endpoint=override.end_session_endpoint,
        end_session_method="POST"
        if end_session and end_session.method_type == "PostMethod"
        else "GET",
        front_channel_logout_path=oidc.front_channel_logout.path
        if oidc.front_channel_logout
        else None,
        auto_map_namespace=(auto_map.namespace or AUTO_MAP_NAMESPACE) if auto_map else None,
        fail_on_redirect=ctx.auth_config.spec.fail_on_redirect,
    )


def _issuer(url: str, ctx: StepContext) -> str | None:
    if "://" not in url:
        fixed = "https://" + url
        ctx.warning("issuerUrl", f"{url!r} has no scheme: gw uses {fixed}")
        url = fixed
    return url if ctx.absolute_url("issuerUrl", url) else None


def _client_secret(oidc: OidcAuthorizationCode, ctx: StepContext) -> str | None:
    """The client secret from its OAuth secret; "" for a public client."""
    ref, disabled, field = oidc.client_secret_ref, oidc.disable_client_secret, "clientSecretRef"
    client_auth = oidc.client_authentication
    if client_auth is not None:
        if client_auth.private_key_jwt is not None:
            ctx.not_supported(
                "clientAuthentication.privateKeyJwt", "authenticate with a client secret"
            )
            return None
        if ref is not None or disabled is not None:
            ctx.error(
                "clientAuthentication",
                "set either clientAuthentication or clientSecretRef/disableClientSecret, not both",
            )
            return None
        if client_auth.client_secret is None:
            ctx.error("clientAuthentication", "set clientSecret")
            return None
        ref = client_auth.client_secret.client_secret_ref
        disabled = client_auth.client_secret.disable_client_secret
        field = "clientAuthentication.clientSecret.clientSecretRef"
    if ref is None:
        if disabled:
            return ""
        ctx.error(
            field,
            "required: name the OAuth secret that holds the client secret "
            "(or set disableClientSecret for a public client)",
        )
        return None
    return secret_value(ref, OAUTH_TYPE, CLIENT_SECRET_KEY, field, ctx, "oauth")


def _check_urls(oidc: OidcAuthorizationCode, ctx: StepContext) -> bool:
    urls = [("appUrl", oidc.app_url)]
    if oidc.after_logout_url and not oidc.after_logout_url.startswith("/"):
        urls.append(("afterLogoutUrl", oidc.after_logout_url))
    override = oidc.discovery_override or DiscoveryOverride()
    for name in (
        "authEndpoint",
        "tokenEndpoint",
        "jwksUri",
        "revocationEndpoint",
        "endSessionEndpoint",
    ):
        value = getattr(override, _snake(name))
        if value is not None:
            urls.append((f"discoveryOverride.{name}", value))
    for name in _UNUSED_DISCOVERY:
        if getattr(override, _snake(name)):
            ctx.warning(
                f"discoveryOverride.{name}",
                f"has no effect: gw does not read the provider's {name}",
            )
    return all([ctx.absolute_url(name, url) for name, url in urls])


def _check_names(oidc: OidcAuthorizationCode, ctx: StepContext) -> bool:
    """The client id, scopes, extra query parameters and header names."""
    ok = True
    if not oidc.client_id.strip():
        ctx.error("clientId", "required: the client id at the identity provider")
        ok = False
    for i, scope in enumerate(oidc.scopes):
        if not scope or any(c.isspace() for c in scope):
            ctx.error(f"scopes[{i}]", f"{scope!r} is not a scope")
            ok = False
    for param in sorted(set(oidc.auth_endpoint_query_params) & RESERVED_AUTH_PARAMS):
        ctx.error(
            f"authEndpointQueryParams.{param}",
            f"{param} is set by the extauth server itself (state, nonce and PKCE are built in)",
        )
        ok = False
    for field, params in (
        ("authEndpointQueryParams", oidc.auth_endpoint_query_params),
        ("tokenEndpointQueryParams", oidc.token_endpoint_query_params),
    ):
        for param in sorted(set(params) & PKCE_PARAMS):
            ctx.warning(
                f"{field}.{param}",
                "ignored: gw makes a new PKCE challenge and verifier "
                "for every login (S256), which a fixed pair would weaken",
            )
    headers = oidc.headers or OidcHeaders()
    names = [
        ("headers.idTokenHeader", headers.id_token_header),
        ("headers.accessTokenHeader", headers.access_token_header),
    ]
    for which, claims in (
        ("identityToken", oidc.identity_token),
        ("accessToken", oidc.access_token),
    ):
        for i, claim in enumerate(claims.claims_to_headers if claims else []):
            names.append((f"{which}.claimsToHeaders[{i}].header", claim.header))
    for name, value in names:
        if value is not None and not TOKEN.match(value):
            ctx.error(name, f"{value!r} is not a header name")
            ok = False
    return ok


def _refuse_unsupported(oidc: OidcAuthorizationCode, ctx: StepContext) -> None:
    if oidc.azure is not None:
        ctx.not_supported("azure", "gw does not fetch distributed claims from Microsoft Graph")


def _params(params: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in params.items() if k not in PKCE_PARAMS))


def _claims(claims: TokenClaims | None) -> tuple[extauth_oidc.ClaimToHeader, ...]:
    return tuple(
        extauth_oidc.ClaimToHeader(claim=c.claim, header=c.header.lower(), append=c.append)
        for c in (claims.claims_to_headers if claims else [])
    )


def _lower(header: str | None) -> str | None:
    return header.lower() if header else None


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
