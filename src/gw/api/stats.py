"""`stats` on a virtual host: virtual clusters, requests counted apart in Envoy's stats."""

from __future__ import annotations

from gw.api.meta import Model


class VirtualCluster(Model):
    name: str = ""
    #: RE2; the whole path must match.
    pattern: str = ""
    method: str = ""


class Stats(Model):
    virtual_clusters: list[VirtualCluster] = []
