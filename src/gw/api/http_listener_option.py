"""HttpListenerOption (`gateway.vendor.io/v1`): `httpGateway.options` kept in a resource of
its own and attached to Gateways of its namespace by `targetRefs` (the established kind).

Of all the options that target a gateway, the established precedence picks one: those
naming the listener (`sectionName`) before those naming the whole gateway, older before
newer. The Gateway's own `httpGateway.options` fields win over the chosen one's.
"""

from __future__ import annotations

from typing import ClassVar

from gw.api.http_listener_options import HttpListenerOptions
from gw.api.meta import Model, Resource


class PolicyTargetReference(Model):
    """`group` `gateway.vendor.io`, `kind` `Gateway`; `namespace` (if given) the option's
    own; `sectionName` the listener (`listener-<bindAddress>-<bindPort>`)."""

    group: str = ""
    kind: str = ""
    name: str
    namespace: str | None = None
    section_name: str | None = None


class HttpListenerOptionSpec(Model):
    options: HttpListenerOptions | None = None
    target_refs: list[PolicyTargetReference] = []


class HttpListenerOption(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "HttpListenerOption"
    PLURAL: ClassVar[str] = "httplisteneroptions"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("hlisopts",)

    spec: HttpListenerOptionSpec = HttpListenerOptionSpec()
