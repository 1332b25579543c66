"""`jwt: {}`: a step that allows when Envoy's JWT filter verified a token for the request.

It lets `booleanExpr` combine the JWT verification of the virtual host (or route) with other
checks, e.g. `jwt || apikey`: the host's JWT options must then let requests without a valid
token continue (`allowMissingOrFailedJwt: true`), and this step reads what the filter
verified from the dynamic metadata Envoy sends along (`METADATA_NAMESPACE`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Where Envoy's JWT filter puts the payloads it verified, by provider.
METADATA_NAMESPACE = "envoy.filters.http.jwt_authn"


@dataclass(frozen=True, slots=True, kw_only=True)
class JwtStep:
    kind: Literal["jwt"] = "jwt"
