"""RBAC on verified JWT claims: policies of methods, a path prefix and principals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimMatch:
    """A claim of a verified payload: `path` (a nested claim is several segments) must
    hold `value`, compared as `kind` says."""

    path: tuple[str, ...]
    kind: Literal["exact", "bool", "list_contains", "regex"]
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RbacPrincipal:
    """All `claims` hold in the payload verified by one of `providers` (JwtProvider names)."""

    providers: tuple[str, ...]
    claims: tuple[ClaimMatch, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RbacPolicy:
    """Allows a request whose method is in `methods` (empty: any), whose path starts with
    `path_prefix` (None: any), and that one of `principals` matches."""

    name: str
    methods: tuple[str, ...] = ()
    path_prefix: str | None = None
    principals: tuple[RbacPrincipal, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rbac:
    """A request passes when some policy allows it; no policies deny everything.
    `disabled` (on a route) turns the virtual host's RBAC off there."""

    policies: tuple[RbacPolicy, ...] = ()
    disabled: bool = False
