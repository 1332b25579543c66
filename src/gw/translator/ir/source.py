"""`SourceRef`: the resource every named IR element (virtual host, listener, cluster,
secret) came from."""

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
