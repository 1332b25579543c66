"""`routeAction.dynamicForwardProxy`: the upstream is the request's own host, resolved by
Envoy's DNS cache, instead of an Upstream."""

from __future__ import annotations

from gw.api.meta import Model


class DynamicForwardProxyRoute(Model):
    """At most one of `hostRewrite` and `autoHostRewriteHeader`."""

    #: Forward to this host instead of the request's.
    host_rewrite: str | None = None
    #: Forward to the host named in this request header (the Host is rewritten to it).
    auto_host_rewrite_header: str | None = None
