"""`ldap`: authenticate the request's basic-auth user by binding as them at an LDAP server,
and authorize by their entry's group memberships; resolved by stage 1 (the address split,
defaults applied, the service account's credentials read from their Secret).

The service account's password is a secret: dumps redact it (`password`) and the
dataclass's repr leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceAccount:
    username: str  # a DN
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Ldap:
    kind: Literal["ldap"] = "ldap"
    host: str
    port: int
    #: `ldaps://`: TLS from the first byte, verified with the system's CAs.
    tls: bool = False
    #: The user's DN: `%s` is the (escaped) user name.
    user_dn_template: str
    membership_attribute: str = "memberOf"
    #: Group DNs, normalised (lower case, no spaces around `,` and `=`).
    allowed_groups: tuple[str, ...] = ()
    search_filter: str = "(uid=*)"
    disable_group_checking: bool = False
    pool_max_size: int = 5
    pool_initial_size: int = 2
    service_account: ServiceAccount | None = None
    #: Read the memberships as the service account (else as the user).
    check_groups_with_service_account: bool = False


def normalized_dn(dn: str) -> str:
    """A DN compared by value: lower case, no spaces around `,` and `=` (enough for the
    DNs directories write; both the configuration and the entries go through it)."""
    parts = [p.strip() for p in dn.split(",")]
    return ",".join("=".join(s.strip() for s in p.split("=", 1)) for p in parts).lower()
