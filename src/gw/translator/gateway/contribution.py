"""`Contribution`: what one resource adds to the Proxy.

Stage 1 builds one per resource. When a resource is rejected, its new contribution is
dropped and the one it made when it was last accepted is used instead (REFERENCE.md §2.4):
a typo never takes live routes away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gw import api
from gw.translator import ir
from gw.translator.ir.frozen import use_slot_setters
from gw.translator.refs import Edge
from gw.translator.reports import Findings
from gw.wire import extauth, ratelimit

if TYPE_CHECKING:
    from gw.translator.gateway.gateways import GatewayListener

#: Which listener a virtual host is placed on: `http`/`https` (the built-in gateways, and
#: what `virtualhosts.py` builds: plain or TLS), or a Gateway's `<namespace>.<name>`.
ListenerRole = str


@use_slot_setters
@dataclass(frozen=True, slots=True, kw_only=True)
class Contribution:
    virtual_hosts: tuple[tuple[ListenerRole, ir.VirtualHost], ...] = ()
    clusters: tuple[ir.Cluster, ...] = ()
    secrets: tuple[ir.TlsSecret, ...] = ()
    auth_configs: tuple[extauth.AuthConfig, ...] = ()
    rate_limit_configs: tuple[ratelimit.RateLimitConfig, ...] = ()
    #: A Gateway's listener (the kind's whole contribution).
    gateways: tuple[GatewayListener, ...] = ()

    def placed(
        self, virtual_hosts: tuple[tuple[ListenerRole, ir.VirtualHost], ...]
    ) -> Contribution:
        """This contribution with its virtual hosts on the listeners that select them; its
        TLS secrets go with them, so a host placed nowhere takes none along. Made directly:
        every VirtualService is placed at a full build, and `dataclasses.replace` costs
        twice as much (the test checks that every other field is kept)."""
        return Contribution(
            virtual_hosts=virtual_hosts,
            clusters=self.clusters,
            secrets=self.secrets if virtual_hosts else (),
            auth_configs=self.auth_configs,
            rate_limit_configs=self.rate_limit_configs,
            gateways=self.gateways,
        )


@use_slot_setters
@dataclass(frozen=True, slots=True, kw_only=True)
class BuiltHost:
    """What building one VirtualService produced, as values: its contribution (None when
    it has no virtual host), its findings (on it and on the route tables it delegates to)
    and the references it resolved. Merging them into a build is the same whether the
    host was just built or is reused (`hostcache.py`)."""

    vs: api.VirtualService
    contribution: Contribution | None
    findings: Findings
    edges: tuple[Edge, ...]
