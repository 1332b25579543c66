"""Session passes (Settings `extauth.sessionPass.ttl`, a gw extension): which AuthConfigs
get them, and with what key, cookie and headers.

Why: every request of a logged-in OIDC session costs an ext_authz round trip to the
extauth server, about half of Envoy's CPU per request (docs/benchmarks.md). With a pass,
the server's allow also sets a short-lived signed cookie that Envoy verifies by itself
(`envoy/extauth_pass.py`), so the session's next requests skip the server until it
expires. The price: a pass outlives a session ended elsewhere (deleted from Redis) by up
to its TTL, so it is off unless the operator asks for it, and the TTL is at most 5 min.

An AuthConfig gets a pass when it is checked over HTTP (`extauth_http.py`), is one
`oauth2.oidcAuthorizationCode` step that writes no dynamic metadata
(`autoMapFromMetadata`, `dynamicMetadataFromClaims`), is not tied to one domain
(`targetDomain`, which Envoy could not check), and sets only headers Envoy may replace:
no appended claim headers, no `authorization` or `cookie`.

The key: the control plane's (random per start, `Options.session_pass_key`), derived per
AuthConfig and per version of its spec, so passes made for another AuthConfig or before
an edit never verify.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
from collections.abc import Mapping

from gw import api
from gw.api.authconfig_oidc import OidcAuthorizationCode
from gw.api.duration import duration_ms
from gw.api.settings import ExtAuthSettings
from gw.translator import ir
from gw.translator.reports import ResourceReport
from gw.wire.extauth import AuthConfig
from gw.wire.extauth_pass import SessionPass

#: The longest pass: how long a session ended elsewhere may still be let through.
MAX_TTL_S = 300
#: The shortest: Envoy accepts a pass up to 2s past its `exp`, which the server makes that
#: much earlier than the TTL says.
MIN_TTL_S = 3
FIELD = "sessionPass.ttl"
#: Headers a client sends itself (the listener does not strip them): Envoy would add a
#: pass's copy next to the client's instead of replacing it.
CLIENT_HEADERS = frozenset({"authorization", "cookie"})


def pass_ttl_s(extauth: ExtAuthSettings | None) -> int | None:
    """The pass TTL in whole seconds, or None (no pass, or a TTL `check_ttl` refuses)."""
    if extauth is None or extauth.session_pass is None:
        return None
    seconds = duration_ms(extauth.session_pass.ttl) / 1000
    return int(seconds) if MIN_TTL_S <= seconds <= MAX_TTL_S else None


def check_ttl(extauth: ExtAuthSettings | None, field: str, report: ResourceReport) -> None:
    """A TTL below 3s or above 5m is an error on the Settings (and no pass is made)."""
    if extauth is None or extauth.session_pass is None or pass_ttl_s(extauth) is not None:
        return
    report.error(
        f"{field}.{FIELD}",
        f"session pass TTL {extauth.session_pass.ttl} is out of range: use 3s to 5m (a pass "
        "lets a session through for that long after it ended elsewhere)",
    )


def with_pass(
    built: AuthConfig,
    auth_config: api.AuthConfig,
    extauth: ExtAuthSettings | None,
    master_key: bytes | None,
) -> AuthConfig:
    """`built` with its session pass, when the Settings ask for passes and it may have
    one (the server then sets pass cookies; Envoy checks them where the AuthConfig is
    answered over HTTP)."""
    ttl_s = pass_ttl_s(extauth)
    if ttl_s is None or master_key is None:
        return built
    headers = _pass_headers(auth_config)
    if headers is None:
        return built
    version = hashlib.sha256(auth_config.spec.model_dump_json().encode()).hexdigest()
    derived = hmac.new(master_key, f"{built.config_id}\n{version}".encode(), "sha256")
    cookie = "gw-pass-" + hashlib.sha256(built.config_id.encode()).hexdigest()[:12]
    return dataclasses.replace(
        built,
        session_pass=SessionPass(
            ttl_s=ttl_s,
            signing_key=base64.urlsafe_b64encode(derived.digest()).rstrip(b"=").decode(),
            cookie_name=cookie,
            headers=tuple(sorted(headers)),
        ),
    )


def _pass_headers(auth_config: api.AuthConfig) -> set[str] | None:
    """The headers an allow of `auth_config` sets, or None when it may have no pass."""
    configs = auth_config.spec.configs
    oauth2 = configs[0].oauth2 if len(configs) == 1 else None
    oidc = oauth2.oidc_authorization_code if oauth2 is not None else None
    if oidc is None or oidc.auto_map_from_metadata is not None:
        return None
    if oidc.dynamic_metadata_from_claims or _target_domain(oidc):
        return None
    headers: set[str] = set()
    if oidc.headers is not None:
        names = (oidc.headers.id_token_header, oidc.headers.access_token_header)
        headers.update(h.lower() for h in names if h)
    for claims in (oidc.identity_token, oidc.access_token):
        for claim in claims.claims_to_headers if claims else ():
            if claim.append:
                return None
            headers.add(claim.header.lower())
    if headers & CLIENT_HEADERS:
        return None
    return headers


def _target_domain(oidc: OidcAuthorizationCode) -> bool:
    session = oidc.session
    if session is None:
        return False
    redis = session.redis or session.store
    return bool(
        (redis is not None and redis.target_domain)
        or (session.cookie is not None and session.cookie.target_domain)
    )


def with_passes(vhost: ir.VirtualHost, passes: Mapping[str, SessionPass]) -> ir.VirtualHost:
    """`vhost` whose server's HTTP checks know the passes of the AuthConfigs they answer
    (Envoy verifies those where the AuthConfig guards a request)."""
    server = vhost.extauth_server
    checks = server.http_checks if server is not None else None
    if server is None or checks is None:
        return vhost
    found = tuple((c, passes[c]) for c in checks.config_ids if c in passes)
    if not found or checks.passes == found:
        return vhost
    checks = dataclasses.replace(checks, passes=found)
    return dataclasses.replace(
        vhost, extauth_server=dataclasses.replace(server, http_checks=checks)
    )
