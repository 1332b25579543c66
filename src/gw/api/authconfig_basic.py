"""`basicAuth` of an AuthConfig: users with salted password hashes.

Two forms, exactly one of which is set: the legacy `apr.users` (APR1 hashes, as
`htpasswd -m` makes them), or the extended `encryption` (`apr: {}` or `sha1: {}`) with
`userList.users`. The hashes are secrets: they are left out of reprs, and the admin API and
gwctl show them redacted.
"""

from __future__ import annotations

from pydantic import Field

from gw.api.meta import Empty, Model


class SaltedHashedPassword(Model):
    salt: str = Field("", repr=False)
    hashed_password: str = Field("", repr=False)


class AprUsers(Model):
    users: dict[str, SaltedHashedPassword] = {}


class EncryptionType(Model):
    apr: Empty | None = None
    sha1: Empty | None = None


class UserList(Model):
    users: dict[str, SaltedHashedPassword] = {}


class BasicAuth(Model):
    realm: str = ""
    apr: AprUsers | None = None
    encryption: EncryptionType | None = None
    user_list: UserList | None = None
