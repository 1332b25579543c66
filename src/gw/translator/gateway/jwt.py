"""One JWT check (`jwt`, a stage of `jwtStaged` or of a route's `jwtProvidersStaged`) →
`ir.JwtVerification`: checked providers, keys as JWKS. Which check applies where (stages,
routes) is `jwt_stages.py`.

Everything Envoy would refuse, and everything that would leave a host open, is a finding
naming the field: a provider without an issuer or a key source, a key that does not parse,
a remote key set without (or with an unknown) Upstream. Fail closed: the VirtualService is
then rejected whole.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from gw import api
from gw.api import ResourceKey
from gw.api.duration import duration_ms
from gw.api.jwt import JwtProvider, RemoteJwks, TokenSource, VhostJwt
from gw.translator import ir
from gw.translator.gateway.jwks import JwksError, local_jwks
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

DEFAULT_CLOCK_SKEW_SECONDS = 60
DEFAULT_CACHE_DURATION_MS = 300_000
#: RFC 9110 `token`: what a header name may be made of.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def provider_name(prefix: str, provider: str) -> str:
    """The provider's name in Envoy, unique on a listener: `<virtual host>_<provider>` for a
    host's, with the route's tag inserted for a route's own. Its verified payload is stored
    under this key, which is where RBAC principals read claims."""
    return f"{prefix}_{provider}"


def build_jwt(
    options: VhostJwt,
    *,
    field: str,
    prefix: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> ir.JwtVerification | None:
    """One JWT check (at `field`; providers named `<prefix>_<name>`), or None when a
    finding makes it unusable."""
    if not options.providers:
        report.error(
            f"{field}.providers",
            "jwt needs at least one provider; remove the jwt option to serve without tokens",
        )
        return None
    errors_before = len(report.errors)
    providers = [
        _provider(
            name,
            options.providers[name],
            field=field,
            prefix=prefix,
            referrer=referrer,
            refs=refs,
            report=report,
        )
        for name in sorted(options.providers)
    ]
    if len(report.errors) > errors_before:
        return None
    return ir.JwtVerification(providers=tuple(providers), require=_require(options))


Require = Literal["valid", "allow_missing", "allow_missing_or_failed"]
_POLICIES: dict[str, Require] = {
    "REQUIRE_VALID": "valid",
    "ALLOW_MISSING": "allow_missing",
    "ALLOW_MISSING_OR_FAILED": "allow_missing_or_failed",
}


def _require(options: VhostJwt) -> Require:
    """`allowMissingOrFailedJwt: true` overrides `validationPolicy` (REFERENCE.md §4.1)."""
    if options.allow_missing_or_failed_jwt:
        return "allow_missing_or_failed"
    return _POLICIES[options.validation_policy]


def _provider(
    name: str,
    provider: JwtProvider,
    *,
    field: str,
    prefix: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> ir.JwtProvider:
    providers_field, field = f"{field}.providers", f"{field}.providers.{name}"
    if not name.strip():
        report.error(providers_field, "a provider needs a non-empty name")
    issuer = (provider.issuer or "").strip()
    if not issuer:
        report.error(
            f"{field}.issuer",
            "issuer is required: the value the token's iss claim must equal",
        )
    local, remote = _key_source(provider, field=field, referrer=referrer, refs=refs, report=report)
    headers, params = _token_source(provider.token_source, f"{field}.tokenSource", report)
    claims = _claims_to_headers(provider, field, report)
    for i, audience in enumerate(provider.audiences):
        if not audience.strip():
            report.error(f"{field}.audiences[{i}]", "an audience cannot be empty")
    return ir.JwtProvider(
        name=provider_name(prefix, name),
        issuer=issuer,
        audiences=tuple(provider.audiences),
        local_jwks=local,
        remote_jwks=remote,
        headers=headers,
        query_params=params,
        forward_token=provider.keep_token,
        claims_to_headers=claims,
        clock_skew_seconds=(
            DEFAULT_CLOCK_SKEW_SECONDS
            if provider.clock_skew_seconds is None
            else provider.clock_skew_seconds
        ),
        failed_status_metadata_key=provider.attach_failed_status_to_metadata or None,
    )


def _key_source(
    provider: JwtProvider,
    *,
    field: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> tuple[str | None, ir.RemoteJwks | None]:
    jwks = provider.jwks
    if jwks is None or (jwks.local is None) == (jwks.remote is None):
        report.error(
            f"{field}.jwks",
            "no jwks source provided: set exactly one of jwks.local.key and jwks.remote",
        )
        return None, None
    if jwks.local is not None:
        try:
            return local_jwks(jwks.local.key), None
        except JwksError as exc:
            report.error(f"{field}.jwks.local.key", f"failed to parse the local key: {exc}")
            return None, None
    assert jwks.remote is not None
    remote = _remote(
        jwks.remote, field=f"{field}.jwks.remote", referrer=referrer, refs=refs, report=report
    )
    return None, remote


def _remote(
    remote: RemoteJwks,
    *,
    field: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
) -> ir.RemoteJwks | None:
    url = urlsplit(remote.url.strip())
    if url.scheme not in ("http", "https") or not url.hostname:
        report.error(
            f"{field}.url",
            f"{remote.url!r} is not an http(s) URL with a host, like http://idp/keys.json",
        )
    cache_ms = DEFAULT_CACHE_DURATION_MS
    if remote.cache_duration is not None:
        cache_ms = int(duration_ms(remote.cache_duration))
        if cache_ms < 1:
            report.error(f"{field}.cacheDuration", "the cache duration must be at least 1ms")
    if remote.upstream_ref is None:
        report.error(
            f"{field}.upstreamRef",
            "upstream ref must not be empty in jwks source: name the Upstream the key set "
            "is fetched through",
        )
        return None
    ref_field = f"{field}.upstreamRef"
    key = refs.key(api.Upstream, remote.upstream_ref, referrer)
    found = refs.resolve(api.Upstream, remote.upstream_ref, referrer=referrer, field=ref_field)
    if found is None and not refs.exists(key):
        report.error(
            ref_field,
            f"*v1.Upstream {{ {key.namespace}.{key.name} }} not found: the key set cannot "
            "be fetched",
        )
        return None
    return ir.RemoteJwks(
        url=remote.url.strip(),
        cluster=cluster_name(key.name, key.namespace),
        cache_duration_ms=cache_ms,
    )


def _token_source(
    source: TokenSource | None, field: str, report: ResourceReport
) -> tuple[tuple[ir.TokenHeader, ...], tuple[str, ...]]:
    if source is None:
        return (), ()
    headers = []
    for i, header in enumerate(source.headers):
        if _header_ok(header.header, f"{field}.headers[{i}].header", report):
            headers.append(ir.TokenHeader(name=header.header, prefix=header.prefix or ""))
    params = []
    for i, param in enumerate(source.query_params):
        if not param.strip():
            report.error(f"{field}.queryParams[{i}]", "a query parameter name cannot be empty")
        params.append(param)
    if not source.headers and not source.query_params:
        report.error(
            field,
            "tokenSource names no header and no query parameter; remove it to use the "
            "defaults (Authorization: Bearer, access_token)",
        )
    return tuple(headers), tuple(params)


def _claims_to_headers(
    provider: JwtProvider, field: str, report: ResourceReport
) -> tuple[ir.ClaimToHeader, ...]:
    out = []
    for i, mapping in enumerate(provider.claims_to_headers):
        where = f"{field}.claimsToHeaders[{i}]"
        if not mapping.claim.strip():
            report.error(f"{where}.claim", "the claim name cannot be empty")
            continue
        if not _header_ok(mapping.header, f"{where}.header", report):
            continue
        if mapping.append:
            report.warning(
                f"{where}.append",
                "append is not supported: a client's own copy of the header is always removed "
                "so that it cannot be spoofed",
            )
        out.append(ir.ClaimToHeader(claim=mapping.claim, header=mapping.header))
    return tuple(out)


def _header_ok(name: str, field: str, report: ResourceReport) -> bool:
    if not _HEADER_NAME.match(name):
        report.error(field, f"{name!r} is not a valid HTTP header name")
        return False
    return True
