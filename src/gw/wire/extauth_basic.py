"""`basicAuth`: users and their salted password hashes, checked against the request's
`Authorization: Basic ...` header.

The legacy form (`apr.users`) and the extended one (`encryption` + `userList`) both become a
`BasicAuth` here; `algorithm` says how a password is hashed with its salt: `apr1` (Apache's
iterated MD5, what `htpasswd -m` writes) or `sha1` (hex SHA-1 of password + salt). The
extended form also reads `Proxy-Authorization`. Salts and hashes are secrets as much as the
passwords they protect: dumps redact them, and the dataclasses' repr leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

AUTHORIZATION = "authorization"
PROXY_AUTHORIZATION = "proxy-authorization"


@dataclass(frozen=True, slots=True, kw_only=True)
class User:
    name: str
    salt: str = field(repr=False)
    hashed_password: str = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class BasicAuth:
    kind: Literal["basic"] = "basic"
    #: Shown by browsers in the login prompt: `www-authenticate: Basic realm="<realm>"`.
    realm: str = ""
    algorithm: Literal["apr1", "sha1"] = "apr1"
    users: tuple[User, ...] = ()
    #: The extended form: credentials may also come in `Proxy-Authorization`.
    proxy_authorization: bool = False
