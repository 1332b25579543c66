"""An AuthConfig's session pass (Settings `extauth.sessionPass`, a gw extension): after an
allow, the extauth server hands the browser a short-lived signed cookie that Envoy checks
by itself (`jwt_authn`), so the next requests of a logged-in session skip the extauth
server until it expires.

The pass is a JWS (HS256) with `aud` = the config id, `exp` = the earlier of now + `ttl_s`
and the session's own expiry, and the allow's headers as claims `h0`, `h1`, ... (the
header at that index of `headers`, which Envoy's `claim_to_headers` copies back). The
signing key is the control plane's, derived per AuthConfig version: an edited AuthConfig
gets a new key, so passes made for the old one no longer verify. Dumps redact it; repr
hides it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPass:
    ttl_s: int
    #: The HS256 key, base64url without padding (Envoy's `oct` JWK `k`).
    signing_key: str = field(repr=False)
    cookie_name: str
    #: The request headers a pass carries (lowercase), in claim order; an allow that sets
    #: any other header, or appends one, gets no pass.
    headers: tuple[str, ...] = ()
