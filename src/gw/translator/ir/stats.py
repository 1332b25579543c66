"""Virtual clusters: requests of a virtual host that Envoy counts under their own name."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class VirtualCluster:
    """Stats `vhost.<virtual host>.vcluster.<name>.*` for requests whose whole path matches
    `pattern` (and whose method is `method`, when set)."""

    name: str
    pattern: str
    method: str | None = None
