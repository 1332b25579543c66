"""`shadowing` on a route: a copy of a share of its requests goes to another Upstream,
whose answers are ignored."""

from __future__ import annotations

from gw.api.meta import Model, ResourceRef


class RouteShadowing(Model):
    upstream: ResourceRef | None = None
    #: Share of requests copied, 0.0 to 100.0.
    percentage: float = 0.0
    #: True: the copy keeps the Host as it is (Envoy appends `-shadow` otherwise).
    disable_shadow_host_suffix_append: bool = False
    #: The copy's Host, replaced whole (implies `disableShadowHostSuffixAppend`).
    host_rewrite_literal: str = ""
