"""The orchestrator's own objects (`v1` Service, Endpoints, Pod, ConfigMap) and the names of
the upstreams made from them.

These are the orchestrator's view of running services: in directory mode a folder holds them
as manifests, as `kubectl get -o yaml` prints them. The orchestrator, not gw, is their author,
so they are read leniently: fields gw does not use are ignored (never an error), only the
fields gw reads are typed. gw's own kinds stay strict.
"""

from __future__ import annotations

import hashlib
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from gw.api.meta import Resource

#: An orchestrator name is at most this long (a DNS label).
MAX_NAME_LENGTH = 63
#: Prefix of the in-memory upstream a `routeAction.single.orch` destination resolves to.
SERVICE_UPSTREAM_PREFIX = "orch-svc:"

_REPLACED = str.maketrans({c: "-" for c in "*/.:_ "})
_DROPPED = str.maketrans({c: None for c in "[]\n\"'"})


class OrchModel(BaseModel):
    """Base of the orchestrator's nested objects: camelCase, unknown fields ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )


class OrchResource(Resource):
    """Base of the orchestrator's top-level objects (metadata stays checked)."""

    model_config = ConfigDict(extra="ignore")

    API_VERSION: ClassVar[str] = "v1"


# --- Service --------------------------------------------------------------------------------


class ServicePort(OrchModel):
    name: str = ""
    port: int = Field(ge=1, le=65535)
    target_port: int | str | None = None
    protocol: str = "TCP"
    app_protocol: str | None = None


class ServiceSpec(OrchModel):
    ports: list[ServicePort] = []
    selector: dict[str, str] = {}
    type: str = "ClusterIP"


class Service(OrchResource):
    KIND: ClassVar[str] = "Service"
    PLURAL: ClassVar[str] = "services"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("svc",)

    spec: ServiceSpec = ServiceSpec()

    def port(self, number: int) -> ServicePort | None:
        """The service port numbered `number` (the `port`, not the target port)."""
        return next((p for p in self.spec.ports if p.port == number), None)


# --- Endpoints ------------------------------------------------------------------------------


class ObjectReference(OrchModel):
    kind: str = ""
    name: str = ""
    namespace: str = ""


class EndpointAddress(OrchModel):
    ip: str
    hostname: str | None = None
    target_ref: ObjectReference | None = None


class EndpointPort(OrchModel):
    name: str = ""
    port: int = Field(ge=1, le=65535)
    protocol: str = "TCP"


class EndpointSubset(OrchModel):
    addresses: list[EndpointAddress] = []
    not_ready_addresses: list[EndpointAddress] = []
    ports: list[EndpointPort] = []


class Endpoints(OrchResource):
    """The addresses behind a Service of the same name; only `addresses` are ready."""

    KIND: ClassVar[str] = "Endpoints"
    PLURAL: ClassVar[str] = "endpoints"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("ep",)

    subsets: list[EndpointSubset] = []


# --- Pod ------------------------------------------------------------------------------------


class ContainerPort(OrchModel):
    name: str = ""
    container_port: int = Field(ge=1, le=65535)
    protocol: str = "TCP"


class Container(OrchModel):
    name: str = ""
    ports: list[ContainerPort] = []


class PodSpec(OrchModel):
    containers: list[Container] = []


class PodCondition(OrchModel):
    type: str
    status: str


class PodStatus(OrchModel):
    phase: str = "Pending"
    pod_ip: str | None = Field(default=None, alias="podIP")
    conditions: list[PodCondition] = []


class Pod(OrchResource):
    KIND: ClassVar[str] = "Pod"
    PLURAL: ClassVar[str] = "pods"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("po",)

    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()

    @property
    def ready(self) -> bool:
        """Running, with an IP, and not reported unready."""
        unready = any(c.type == "Ready" and c.status != "True" for c in self.status.conditions)
        return self.status.phase == "Running" and bool(self.status.pod_ip) and not unready


# --- ConfigMap ------------------------------------------------------------------------------


class ConfigMap(OrchResource):
    """Plain data by key, not secret (views show it as it is): the Rego modules of `opaAuth`
    (`kubectl create configmap NAME --from-file=policy.rego`). `binaryData` is kept as
    base64 and not used."""

    KIND: ClassVar[str] = "ConfigMap"
    PLURAL: ClassVar[str] = "configmaps"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("cm",)

    data: dict[str, str] = {}
    binary_data: dict[str, str] = {}


#: The orchestrator's kinds: read by discovery and the translator, never given a gw status.
ORCH_KINDS: tuple[type[Resource], ...] = (Service, Endpoints, Pod, ConfigMap)


# --- names ----------------------------------------------------------------------------------


def sanitize_name(name: str) -> str:
    """An orchestrator-safe name, as the established gateway makes it: `* / . : _` and space
    become `-`; `[ ] " '` and newlines are dropped; a name longer than 63 characters becomes
    its first 31 characters, `-` and the MD5 of the whole name, cut to 63; then lower case."""
    name = name.translate(_REPLACED).translate(_DROPPED)
    if len(name) > MAX_NAME_LENGTH:
        digest = hashlib.md5(name.encode(), usedforsecurity=False).hexdigest()
        name = f"{name[:31]}-{digest}"[:MAX_NAME_LENGTH]
    return name.lower()


def service_upstream_name(namespace: str, service: str, port: int) -> str:
    """The name of the upstream discovered for one service port: `<ns>-<svc>-<port>`."""
    return sanitize_name(f"{namespace}-{service}-{port}")


def service_destination_name(namespace: str, service: str, port: int) -> str:
    """The in-memory upstream a route's `orch` destination resolves to:
    `orch-svc:<ns>-<svc>-<port>` (never stored: the colon is not valid in a name)."""
    return SERVICE_UPSTREAM_PREFIX + service_upstream_name(namespace, service, port)
