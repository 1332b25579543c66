"""`basicAuth` of an AuthConfig: users with salted password hashes.

Two forms, exactly one of which is set: the legacy `apr.users` (APR1 hashes, as
`htpasswd -m` makes them), or the extended `encryption` (`apr: {}` or `sha1: {}`) with
`userList.users`. The hashes are secrets: they are left out of reprs, and the admin API and
gwctl show them redacted.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gw.api.meta import Model


class SaltedHashedPassword(Model):
    salt: str = Field("", repr=False)
    hashed_password: str = Field("", repr=False)


class AprUsers(Model):
    users: dict[str, SaltedHashedPassword] = {}


class EncryptionType(Model):
    apr: dict[str, Any] | None = None
    sha1: dict[str, Any] | None = None


class UserList(Model):
    users: dict[str, SaltedHashedPassword] = {}


class BasicAuth(Model):
    realm: str = ""
    apr: AprUsers | None = None
    encryption: EncryptionType | None = None
    user_list: UserList | None = None
