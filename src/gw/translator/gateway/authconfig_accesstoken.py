"""`oauth2.accessTokenValidation` → `gw.wire.extauth_accesstoken.AccessTokenValidation`.

Exactly one way to validate: `introspection` (with client credentials from an OAuth secret,
or a client id alone with `disableClientSecret`), the older `introspectionUrl` (no client
authentication), or `jwt` (a remote key set, or an inline one checked here so that a bad key
is a status). URLs must be absolute; `azure` is refused by name.
"""

from __future__ import annotations

from gw.api.authconfig_accesstoken import AccessTokenValidation, IntrospectionValidation
from gw.api.authconfig_accesstoken import JwtValidation as ApiJwt
from gw.api.secret import OAUTH_TYPE
from gw.translator.gateway.authconfig_oidc import CLIENT_SECRET_KEY
from gw.translator.gateway.authstep import TOKEN, Needs, StepContext, milliseconds, secret_value
from gw.translator.gateway.jwks import JwksError, local_jwks
from gw.wire import extauth_accesstoken, extauth_oidc

AUTHORIZATION = "authorization"
DEFAULT_CACHE_TIMEOUT_MS = 600_000
DEFAULT_REFRESH_MS = 300_000


def needs(validation: AccessTokenValidation) -> Needs:
    return Needs(headers=(AUTHORIZATION,))


def build(
    validation: AccessTokenValidation, ctx: StepContext
) -> extauth_accesstoken.AccessTokenValidation | None:
    ways = [
        name
        for name, value in (
            ("introspectionUrl", validation.introspection_url),
            ("introspection", validation.introspection),
            ("jwt", validation.jwt),
        )
        if value is not None
    ]
    if len(ways) != 1:
        ctx.error("", f"set exactly one of introspection, introspectionUrl or jwt; set: {ways}")
        return None
    if validation.azure is not None:
        ctx.not_supported("azure", "gw reads no distributed claims; use the default provider")
        return None
    introspection = jwt = None
    if validation.introspection is not None:
        introspection = _introspection(validation.introspection, ctx)
    elif validation.introspection_url is not None:
        if ctx.absolute_url("introspectionUrl", validation.introspection_url):
            introspection = extauth_accesstoken.Introspection(url=validation.introspection_url)
    elif validation.jwt is not None:
        jwt = _jwt(validation.jwt, ctx)
    userinfo = validation.userinfo_url
    ok = not userinfo or ctx.absolute_url("userinfoUrl", userinfo)
    claims = _claims_to_headers(validation, ctx)
    for key, claim in validation.dynamic_metadata_from_claims.items():
        if not key or not claim:
            ctx.error(f"dynamicMetadataFromClaims.{key}", "key and claim must not be empty")
            ok = False
    scopes = validation.required_scopes.scope if validation.required_scopes else []
    if any(not s or " " in s for s in scopes):
        ctx.error("requiredScopes.scope", "a scope is one word (no spaces, not empty)")
        ok = False
    if (introspection is None and jwt is None) or claims is None or not ok:
        return None
    return extauth_accesstoken.AccessTokenValidation(
        introspection=introspection,
        jwt=jwt,
        userinfo_url=userinfo,
        cache_timeout_ms=milliseconds(validation.cache_timeout, DEFAULT_CACHE_TIMEOUT_MS),
        required_scopes=tuple(dict.fromkeys(scopes)),
        dynamic_metadata_from_claims=tuple(sorted(validation.dynamic_metadata_from_claims.items())),
        claims_to_headers=claims,
    )


def _introspection(
    spec: IntrospectionValidation, ctx: StepContext
) -> extauth_accesstoken.Introspection | None:
    ok = ctx.absolute_url("introspection.introspectionUrl", spec.introspection_url)
    secret = ""
    field = "introspection.clientSecretRef"
    if spec.client_secret_ref is not None:
        if not spec.client_id:
            ctx.error(field, "set clientId too: the secret authenticates that client")
            return None
        found = secret_value(
            spec.client_secret_ref, OAUTH_TYPE, CLIENT_SECRET_KEY, field, ctx, "oauth"
        )
        if found is None:
            return None
        secret = found
    elif spec.client_id and not spec.disable_client_secret:
        ctx.error(
            field,
            "required with clientId: name the OAuth secret that holds the client secret "
            "(or set disableClientSecret to send the client id alone)",
        )
        return None
    if not ok:
        return None
    return extauth_accesstoken.Introspection(
        url=spec.introspection_url,
        client_id=spec.client_id,
        client_secret=secret,
        user_id_attribute=spec.user_id_attribute_name,
    )


def _jwt(spec: ApiJwt, ctx: StepContext) -> extauth_accesstoken.JwtValidation | None:
    if (spec.remote_jwks is None) == (spec.local_jwks is None):
        ctx.error("jwt", "set exactly one of remoteJwks or localJwks")
        return None
    if spec.remote_jwks is not None:
        if not ctx.absolute_url("jwt.remoteJwks.url", spec.remote_jwks.url):
            return None
        return extauth_accesstoken.JwtValidation(
            remote_jwks_url=spec.remote_jwks.url,
            refresh_interval_ms=milliseconds(spec.remote_jwks.refresh_interval, DEFAULT_REFRESH_MS),
            issuer=spec.issuer,
            audiences=tuple(spec.audiences),
        )
    assert spec.local_jwks is not None
    try:
        document = local_jwks(spec.local_jwks.inline_string)
    except JwksError as exc:
        ctx.error("jwt.localJwks.inlineString", str(exc))
        return None
    return extauth_accesstoken.JwtValidation(
        local_jwks=document, issuer=spec.issuer, audiences=tuple(spec.audiences)
    )


def _claims_to_headers(
    validation: AccessTokenValidation, ctx: StepContext
) -> tuple[extauth_oidc.ClaimToHeader, ...] | None:
    out = []
    for i, mapping in enumerate(validation.claims_to_headers):
        if not TOKEN.match(mapping.header):
            ctx.error(f"claimsToHeaders[{i}].header", f"{mapping.header!r} is not a header name")
            return None
        out.append(
            extauth_oidc.ClaimToHeader(
                claim=mapping.claim, header=mapping.header.lower(), append=mapping.append
            )
        )
    return tuple(out)
