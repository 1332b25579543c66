"""`SourceRef`: the resource every named IR element (virtual host, listener, cluster,
secret) came from; `RouteOrigin`: where in it a route was written."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceRef:
    """The resource an element came from: findings and NACKs map back through it."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}.{self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteOrigin:
    """A route's place in its resource: the resource and the field path of the matcher
    (`spec.virtualHost.routes[1].matchers[0]`), or of the route when it has no matchers.
    `gwctl explain` turns it into a file and line."""

    resource: SourceRef
    field: str

    def __str__(self) -> str:
        return f"{self.resource} {self.field}"
