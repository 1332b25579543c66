"""The resource API: models for every kind, and parsing of manifest documents into them.

This package owns validation at the boundary. It does no I/O: the store reads files and
hands documents here; what comes back is a typed, frozen resource or a `ManifestError`
that names the resource and the field path of every problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from gw.api.authconfig import AuthConfig
from gw.api.gateway import Gateway
from gw.api.http_listener_option import HttpListenerOption
from gw.api.matchable import MatchableHttpGateway, MatchableTcpGateway
from gw.api.meta import Metadata, Model, Resource, ResourceKey, ResourceRef
from gw.api.options import RouteOption, VirtualHostOption
from gw.api.orch import ORCH_KINDS, ConfigMap, Endpoints, Pod, Service
from gw.api.proxy import Proxy
from gw.api.ratelimit import RateLimitConfig
from gw.api.routetable import RouteTable
from gw.api.secret import Secret
from gw.api.settings import Settings
from gw.api.upstream import Upstream
from gw.api.upstreamgroup import UpstreamGroup
from gw.api.virtualservice import VirtualService

__all__ = [
    "KINDS",
    "ORCH_KINDS",
    "STATUSLESS_KINDS",
    "AuthConfig",
    "ConfigMap",
    "Endpoints",
    "Gateway",
    "HttpListenerOption",
    "ManifestError",
    "MatchableHttpGateway",
    "MatchableTcpGateway",
    "Metadata",
    "Model",
    "Pod",
    "Problem",
    "Proxy",
    "RateLimitConfig",
    "Resource",
    "ResourceKey",
    "ResourceRef",
    "RouteOption",
    "RouteTable",
    "Secret",
    "Service",
    "Settings",
    "Upstream",
    "UpstreamGroup",
    "VirtualHostOption",
    "VirtualService",
    "key_of",
    "kind_for",
    "parse_document",
]

#: Every kind gw reads, in the order `gwctl` lists them. Adding a kind = adding it here.
KINDS: tuple[type[Resource], ...] = (
    VirtualService,
    Gateway,
    MatchableHttpGateway,
    MatchableTcpGateway,
    RouteTable,
    Upstream,
    UpstreamGroup,
    VirtualHostOption,
    RouteOption,
    HttpListenerOption,
    AuthConfig,
    RateLimitConfig,
    Settings,
    Secret,
    *ORCH_KINDS,
)

#: Kinds the orchestrator owns: gw reads them and gives them no status.
STATUSLESS_KINDS = frozenset({Secret.KIND, *(k.KIND for k in ORCH_KINDS)})

_BY_KIND: dict[str, type[Resource]] = {k.KIND: k for k in KINDS}


def kind_for(kind: str) -> type[Resource] | None:
    return _BY_KIND.get(kind)


class Problem(tuple[str, str]):
    """(field path, message), e.g. ("spec.virtualHost.routes[0].matchers", "unknown field")."""

    def __new__(cls, field: str, message: str) -> Problem:
        return super().__new__(cls, (field, message))

    @property
    def field(self) -> str:
        return self[0]

    @property
    def message(self) -> str:
        return self[1]

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class ManifestError(Exception):
    """A document that is not a valid gw resource.

    `key` is set when the document names its kind, namespace and name well enough to say
    which resource it meant: the store then marks that resource as broken instead of
    pretending it was deleted.
    """

    def __init__(self, problems: list[Problem], key: ResourceKey | None = None) -> None:
        self.problems = problems
        self.key = key
        super().__init__(self.describe())

    def describe(self) -> str:
        """The problems, prefixed with the resource when it is known."""
        return (f"{self.key}: " if self.key else "") + self.details()

    def details(self) -> str:
        return "; ".join(str(p) for p in self.problems)


class IgnoredDocument(Exception):
    """A well-formed orchestrator object of a kind gw does not read (a Deployment, say)."""


def parse_document(doc: Any) -> Resource:
    """Validate one manifest document.

    Raises `ManifestError` for anything gw cannot accept (an unknown kind of gw's own groups
    included: it is a mistake, and gets a status), and `IgnoredDocument` for objects of
    other groups' kinds, which a folder of orchestrator manifests may well hold.
    """
    if not isinstance(doc, Mapping):
        raise ManifestError([Problem("", f"a manifest must be a mapping, not {_type_name(doc)}")])
    kind = doc.get("kind")
    api_version = doc.get("apiVersion")
    key = key_of(doc)
    if not isinstance(kind, str) or not kind:
        raise ManifestError([Problem("kind", "missing: every manifest needs a kind")], key)
    model = _BY_KIND.get(kind)
    if model is None:
        group = api_version.partition("/")[0] if isinstance(api_version, str) else ""
        if not is_gw_group(group):
            raise IgnoredDocument(f"{api_version}/{kind} is not a gw kind")
        raise ManifestError([Problem("kind", _unknown_kind(kind, group))], key)
    if api_version != model.API_VERSION:
        found = "missing" if api_version is None else f"{api_version!r} is not served"
        raise ManifestError(
            [Problem("apiVersion", f"{found}: {kind} has apiVersion {model.API_VERSION}")], key
        )
    try:
        return model.model_validate(doc, by_alias=True, by_name=False)
    except ValidationError as exc:
        # Never echo input values of a Secret: they are the secret.
        show_input = model is not Secret
        raise ManifestError([_problem(e, show_input) for e in exc.errors()], key) from None


#: The established kinds of gw's groups that gw does not read (yet): what the status says.
NOT_READ_KINDS = {
    "ListenerOption": "listener options shared by Gateways",
}


def is_gw_group(group: str) -> bool:
    """gw's own API groups (`gateway.vendor.io`, `gw.vendor.io`, ...): a document of an
    unknown kind there is a mistake, never someone else's object."""
    return group == "vendor.io" or group.endswith(".vendor.io")


def _unknown_kind(kind: str, group: str) -> str:
    if kind in NOT_READ_KINDS:
        return (
            f"{kind} ({NOT_READ_KINDS[kind]}) is not supported by gw yet: the resource is not "
            "read; remove it"
        )
    known = sorted(k.KIND for k in KINDS if k.API_VERSION.partition("/")[0] == group)
    listed = ", ".join(known) if known else "none"
    return f"{kind} is not a kind of {group} (its kinds: {listed}); check the spelling"


def key_of(doc: Any) -> ResourceKey | None:
    """The resource a manifest document names, when it names one well enough to tell."""
    if not isinstance(doc, Mapping):
        return None
    kind = doc.get("kind")
    metadata = doc.get("metadata")
    if not isinstance(kind, str) or not isinstance(metadata, Mapping):
        return None
    name = metadata.get("name")
    namespace = metadata.get("namespace", "default")
    if not isinstance(name, str) or not name or not isinstance(namespace, str):
        return None
    return ResourceKey(kind, namespace, name)


def _problem(error: Any, show_input: bool) -> Problem:
    path = field_path(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return Problem(path, "unknown field")
    if kind == "missing":
        return Problem(path, "required field is missing")
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if show_input and "input" in error and kind not in ("model_type", "model_attributes_type"):
        message += f" (got {_short(error['input'])})"
    return Problem(path, message)


def field_path(loc: tuple[Any, ...]) -> str:
    """Render a pydantic location as a manifest path: `spec.routes[0].matchers[1].prefix`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-after", "function-before", "function-wrap")):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out


def _type_name(value: Any) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
