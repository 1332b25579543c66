"""`basicAuth` → `gw.wire.extauth_basic.BasicAuth`.

Exactly one form: `apr.users`, or `encryption` (`apr` or `sha1`) with `userList.users`. A
hash is checked for its algorithm's shape, so that the common mistake of pasting the whole
`$apr1$<salt>$<hash>` line of `htpasswd` into `hashedPassword` is a status that says how to
split it, not a login that never works.
"""

from __future__ import annotations

import re

from gw.api.authconfig_basic import BasicAuth, SaltedHashedPassword
from gw.translator.gateway.authstep import Needs, StepContext
from gw.wire import extauth_basic

_APR1_HASH = re.compile(r"^[./0-9A-Za-z]{22}$")
_SHA1_HASH = re.compile(r"^[0-9A-Fa-f]{40}$")
_APR1_LINE = re.compile(r"^\$apr1\$([^$]*)\$([./0-9A-Za-z]{22})$")


def needs(basic: BasicAuth) -> Needs:
    if basic.apr is not None:
        return Needs(headers=(extauth_basic.AUTHORIZATION,))
    return Needs(headers=(extauth_basic.AUTHORIZATION, extauth_basic.PROXY_AUTHORIZATION))


def build(basic: BasicAuth, ctx: StepContext) -> extauth_basic.BasicAuth | None:
    if (basic.apr is None) == (basic.encryption is None and basic.user_list is None):
        ctx.error("", "set either apr, or encryption with userList (not both)")
        return None
    if '"' in basic.realm or any(ord(c) < 32 for c in basic.realm):
        ctx.error("realm", 'may not hold " or control characters (it is quoted in a header)')
        return None
    if basic.apr is not None:
        users, field, algorithm = basic.apr.users, "apr.users", "apr1"
    else:
        encryption = basic.encryption
        if basic.user_list is None or encryption is None:
            ctx.error("", "set both encryption and userList")
            return None
        if (encryption.apr is None) == (encryption.sha1 is None):
            ctx.error("encryption", "set exactly one of apr: {} or sha1: {}")
            return None
        users, field = basic.user_list.users, "userList.users"
        algorithm = "apr1" if encryption.apr is not None else "sha1"
    checked = [_user(name, user, algorithm, f"{field}.{name}", ctx) for name, user in users.items()]
    if None in checked:
        return None
    if not users:
        ctx.warning(field, "no users: every request is refused")
    return extauth_basic.BasicAuth(
        realm=basic.realm,
        algorithm=algorithm,  # type: ignore[arg-type]
        users=tuple(sorted((u for u in checked if u is not None), key=lambda u: u.name)),
        proxy_authorization=basic.apr is None,
    )


def _user(
    name: str, user: SaltedHashedPassword, algorithm: str, field: str, ctx: StepContext
) -> extauth_basic.User | None:
    if not name or ":" in name:
        ctx.error(field, "a user name may not be empty or hold ':'")
        return None
    hashed = user.hashed_password
    if algorithm == "sha1":
        if not _SHA1_HASH.match(hashed):
            ctx.error(f"{field}.hashedPassword", "is not a SHA-1 hash (40 hex digits)")
            return None
        return extauth_basic.User(name=name, salt=user.salt, hashed_password=hashed.lower())
    pasted = _APR1_LINE.match(hashed)
    if pasted:
        ctx.error(
            f"{field}.hashedPassword",
            "holds a whole $apr1$<salt>$<hash> line: put the part between the 2nd and 3rd $ "
            "into salt and the part after the 3rd $ into hashedPassword",
        )
        return None
    if not _APR1_HASH.match(hashed):
        ctx.error(
            f"{field}.hashedPassword",
            "is not an APR1 hash (the 22 characters after the salt in what htpasswd -m writes)",
        )
        return None
    if not user.salt or "$" in user.salt:
        ctx.error(f"{field}.salt", "required: the salt of the APR1 hash (up to 8 characters)")
        return None
    return extauth_basic.User(name=name, salt=user.salt, hashed_password=hashed)
