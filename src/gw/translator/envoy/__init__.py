"""Stage 2: Proxy → Envoy xDS resources.

`build_xds` walks the IR and builds protobuf messages directly (never dicts parsed later).
Resources are keyed by type URL and name, in sorted order, so that an unchanged Proxy gives
byte-identical output and the xDS server sends nothing.
"""

from __future__ import annotations

from gw.translator import ir
from gw.translator.envoy.builder import ListenerChanges, XdsBuilder
from gw.translator.envoy.xds import Messages, Xds

__all__ = ["ListenerChanges", "Messages", "Xds", "XdsBuilder", "build_xds"]


def build_xds(proxy: ir.Proxy, builder: XdsBuilder | None = None) -> Xds:
    """The xDS resources of `proxy`; `builder` (made from the previous translation's)
    reuses what did not change (`builder.py`)."""
    return (builder or XdsBuilder()).build(proxy)
