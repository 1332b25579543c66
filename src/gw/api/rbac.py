"""`rbac` on virtual host or route options: policies whose principals are JWT claims."""

from __future__ import annotations

from typing import Literal

from gw.api.meta import Model


class JwtPrincipal(Model):
    claims: dict[str, str] = {}
    provider: str | None = None
    matcher: Literal["EXACT_STRING", "BOOLEAN", "LIST_CONTAINS", "REGEX_MATCH"] = "EXACT_STRING"


class Principal(Model):
    jwt_principal: JwtPrincipal


class Permissions(Model):
    path_prefix: str | None = None
    methods: list[str] = []


class Policy(Model):
    principals: list[Principal] = []
    permissions: Permissions | None = None
    nested_claim_delimiter: str | None = None


class Rbac(Model):
    disable: bool = False
    policies: dict[str, Policy] = {}
