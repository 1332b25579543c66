"""Which AuthConfigs gw's extauth server answers over plain HTTP, and where.

A gRPC check costs the extauth server about 110 µs of CPU before any auth code runs; an
HTTP/1.1 check about 5 µs (docs/benchmarks.md). So an AuthConfig whose steps need nothing
but the request is checked over Envoy's HTTP ext_authz (`envoy/extauth_http.py`), when:

- the server is gw's own, spoken to over gRPC (Settings `extauth.extauthzServerRef`
  without `httpService`), and an Upstream named like it with `-http` appended stands in
  the same namespace (`gw up` declares `extauth-http` next to `extauth`): the same server's
  HTTP checks (`gw extauth --http-port`);
- Envoy sends no request body (no `requestBody`: the gRPC check carries it);
- every step is an `oauth2.oidcAuthorizationCode` (without `autoMapFromMetadata` or
  `dynamicMetadataFromClaims`: those read or write dynamic metadata, which HTTP does not
  carry), a `basicAuth` or an `apiKeyAuth`. Anything else (JWT steps, OPA, passthrough,
  access-token validation, LDAP) stays on gRPC.

Envoy's HTTP filter copies only the answer headers it lists to the upstream request: the
headers these AuthConfigs set (token and claim headers, API key metadata headers, the
Settings' `userIdHeader`), overwritten or appended as their `append` says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container

from gw import api, defaults
from gw.api import ResourceKey
from gw.api.authconfig_oidc import OidcAuthorizationCode
from gw.api.settings import ExtAuthSettings
from gw.translator import ir
from gw.translator.gateway.authconfig import DEFAULT_USER_ID_HEADER, config_id
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs


def build_http_checks(
    extauth: ExtAuthSettings | None, owner: ResourceKey, refs: Refs
) -> ir.HttpChecks | None:
    """The HTTP checks of the server `extauth` (in `owner`) names, or None."""
    if extauth is None or extauth.extauthz_server_ref is None:
        return None
    if extauth.http_service is not None or extauth.request_body is not None:
        return None
    server = refs.key(api.Upstream, extauth.extauthz_server_ref, owner)
    name = server.name + defaults.EXTAUTH_HTTP_SUFFIX
    # Looked up, not referenced: a missing or rejected `-http` Upstream leaves every check
    # on gRPC (`without_missing_cluster`) instead of rejecting the Settings and the hosts
    # that use extauth.
    if not any(
        u.metadata.name == name and u.metadata.namespace == server.namespace
        for u in refs.of_kind(api.Upstream)
    ):
        return None
    sets: set[str] = set()
    appends: set[str] = set()
    served: list[str] = []
    for auth_config in refs.of_kind(api.AuthConfig):
        headers = _headers(auth_config)
        if headers is None:
            continue
        served.append(config_id(auth_config.metadata.namespace, auth_config.metadata.name))
        sets.update(headers[0])
        appends.update(headers[1])
    if not served:
        return None
    sets.add((extauth.user_id_header or DEFAULT_USER_ID_HEADER).lower())
    return ir.HttpChecks(
        cluster=cluster_name(name, server.namespace),
        config_ids=tuple(sorted(served)),
        upstream_headers=tuple(sorted(sets)),
        # A header one AuthConfig sets and another appends is set: the stricter of the two.
        appended_headers=tuple(sorted(appends - sets)),
    )


def _headers(auth_config: api.AuthConfig) -> tuple[set[str], set[str]] | None:
    """The headers (set, appended) an AuthConfig's allow carries, or None when one of its
    steps needs what only the gRPC check has."""
    sets: set[str] = set()
    appends: set[str] = set()
    if not auth_config.spec.configs:
        return None
    for entry in auth_config.spec.configs:
        oauth2 = entry.oauth2
        oidc = oauth2.oidc_authorization_code if oauth2 else None
        if oidc is not None and _oidc_headers(oidc, sets, appends):
            continue
        if entry.basic_auth is not None:
            continue
        if entry.api_key_auth is not None:
            key = entry.api_key_auth
            sets.update(
                h.lower() for h in (*key.headers_from_metadata, *key.headers_from_metadata_entry)
            )
            continue
        return None
    return sets, appends


def _oidc_headers(oidc: OidcAuthorizationCode, sets: set[str], appends: set[str]) -> bool:
    """Adds an OIDC login's headers; False when it needs dynamic metadata."""
    if oidc.auto_map_from_metadata is not None or oidc.dynamic_metadata_from_claims:
        return False
    headers = oidc.headers
    if headers is not None:
        sets.update(h.lower() for h in (headers.id_token_header, headers.access_token_header) if h)
    for claims in (oidc.identity_token, oidc.access_token):
        for claim in claims.claims_to_headers if claims else ():
            (appends if claim.append else sets).add(claim.header.lower())
    return True


def without_missing_cluster(vhost: ir.VirtualHost, clusters: Container[str]) -> ir.VirtualHost:
    """`vhost` with its checks on gRPC when the HTTP checks' Upstream was rejected (its
    cluster is not served): Envoy would fail every check it sent there."""
    server = vhost.extauth_server
    if server is None or server.http_checks is None or server.http_checks.cluster in clusters:
        return vhost
    return dataclasses.replace(vhost, extauth_server=dataclasses.replace(server, http_checks=None))
