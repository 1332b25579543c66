"""`rbac` on virtual host or route options: policies whose principals are JWT claims.

A request passes when some policy allows it: its method and path fit `permissions`, and one
of its `principals` matches the verified token's claims (REFERENCE.md §4.6).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator

from gw.api.meta import Model


def _claim_text(value: object) -> object:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


ClaimValue = Annotated[str, BeforeValidator(_claim_text)]


class JwtPrincipal(Model):
    """Every claim must match (AND). `provider` restricts the match to tokens verified by
    that provider of the virtual host; unset, a token of any of its providers counts."""

    #: A YAML boolean (`email_verified: true`) is read as its string, for BOOLEAN matchers
    #: (Kubernetes keeps such manifests as written).
    claims: dict[str, ClaimValue] = {}
    provider: str | None = None
    matcher: Literal["EXACT_STRING", "BOOLEAN", "LIST_CONTAINS", "REGEX_MATCH"] = "EXACT_STRING"


class Principal(Model):
    jwt_principal: JwtPrincipal


class Permissions(Model):
    """Unset fields allow anything: no `methods` means every method."""

    path_prefix: str | None = None
    methods: list[str] = []


class Policy(Model):
    principals: list[Principal] = []
    permissions: Permissions | None = None
    #: Splits claim names into a path (`realm.roles` → realm → roles); unset: top level only.
    nested_claim_delimiter: str | None = None


class Rbac(Model):
    """On a route, `disable: true` turns the virtual host's RBAC off for that route, and
    `policies` replace the virtual host's."""

    disable: bool = False
    policies: dict[str, Policy] = {}
