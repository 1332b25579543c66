"""`Contribution`: what one resource adds to the Proxy.

Stage 1 builds one per resource. When a resource is rejected, its new contribution is
dropped and the one it made when it was last accepted is used instead (REFERENCE.md §2.4):
a typo never takes live routes away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator import ir, ir_extauth, ir_ratelimit

ListenerRole = Literal["http", "https"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Contribution:
    virtual_hosts: tuple[tuple[ListenerRole, ir.VirtualHost], ...] = ()
    clusters: tuple[ir.Cluster, ...] = ()
    secrets: tuple[ir.TlsSecret, ...] = ()
    auth_configs: tuple[ir_extauth.AuthConfig, ...] = ()
    rate_limit_configs: tuple[ir_ratelimit.RateLimitConfig, ...] = ()
