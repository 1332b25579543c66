"""Proxy (`gw.vendor.io/v1`): the internal result of translation (SPEC.md), one per proxy
name, readable with `gwctl get proxy`.

gw writes Proxies, it never reads them: the kind is not in `gw.api.KINDS`, so a Proxy
manifest in the folder is ignored like any foreign object. The model exists for the CRD and
the JSON schema; the spec is the shape of REFERENCE.md §1.10 (`listeners[]` with `name`,
`bindAddress`, `bindPort`, `httpListener.virtualHosts[]`, `sslConfigurations[]`,
`metadataStatic`), kept as plain data since only gw produces it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gw.api.meta import Model, Resource


class ProxySpec(Model):
    listeners: list[dict[str, Any]] = []


class Proxy(Resource):
    API_VERSION: ClassVar[str] = "gw.vendor.io/v1"
    KIND: ClassVar[str] = "Proxy"
    PLURAL: ClassVar[str] = "proxies"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("px",)

    spec: ProxySpec = ProxySpec()
