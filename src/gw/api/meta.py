"""Building blocks shared by every resource kind: the model base, metadata, references.

Every gw model rejects unknown fields and spells fields in lowerCamelCase exactly as the
manifests do (SPEC.md). Models are frozen: a parsed resource is a value that the store
hands out and the translator reads, never mutates.
"""

from __future__ import annotations

from dataclasses import make_dataclass
from functools import cache, cached_property
from operator import itemgetter
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from gw.api.names import NamespaceName, ResourceName

#: An unsigned 32-bit protobuf field of the established API (Envoy refuses anything larger).
UInt32 = Annotated[int, Field(ge=0, le=2**32 - 1)]


class Model(BaseModel):
    """Base of every spec object: camelCase aliases, unknown fields refused, immutable.

    An explicit `null` (`annotations:` with nothing after it) on a field that cannot hold
    None means "not set", as the orchestrator's API server prunes it: the field takes its
    default."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )

    def model_post_init(self, context: Any, /) -> None:
        """Models with the same fields set share one set of their names (pydantic gives each
        its own; at 100,000 VirtualServices of nine models each, 190 MB of equal sets),
        and the models of a class the keys of their field dictionaries (`_share_keys`).
        Safe because models are frozen: pydantic changes the set only when a field is
        assigned, and copies it in `model_copy`."""
        fields = self.__pydantic_fields_set__
        shared = _FIELDS_SET.setdefault(frozenset(fields), fields)
        if shared is not fields:
            object.__setattr__(self, "__pydantic_fields_set__", shared)
        _share_keys(self)

    @model_validator(mode="before")
    @classmethod
    def _null_is_unset(cls, data: Any) -> Any:
        if isinstance(data, dict) and None in data.values():
            refused = _not_nullable(cls)
            return {k: v for k, v in data.items() if v is not None or k not in refused}
        return data


#: The one set of field names shared by the models that have those fields set.
_FIELDS_SET: dict[frozenset[str], set[str]] = {}


def _share_keys(model: BaseModel) -> None:
    """Give `model` a field dictionary whose keys are shared with the other models of its
    class: one holding only the values, as CPython makes for the attributes of a plain
    class's instances (PEP 412), where pydantic gives each model a dictionary of its own.
    At 100,000 VirtualServices of nine models each, that is 100 MB less, for under a
    microsecond a model (0.7 s of reading them). The dictionary is that of an instance of
    a plain dataclass of the same fields, made once per model class."""
    fields = model.__dict__
    holder = _HOLDERS.get(type(model))
    if holder is None:
        name = f"{type(model).__name__}Fields"
        holder = _HOLDERS[type(model)] = make_dataclass(name, list(fields), eq=False, repr=False)
    try:
        shared = holder(**fields).__dict__
    except TypeError:  # not every field (a model made otherwise): keep pydantic's
        return
    object.__setattr__(model, "__dict__", shared)


#: For each model class, the plain class whose instances' dictionaries its models take.
_HOLDERS: dict[type[BaseModel], type] = {}


@cache
def _not_nullable(model: type[BaseModel]) -> frozenset[str]:
    """The names and aliases of `model`'s fields that cannot hold None: a null there is
    dropped (unset). Fields that can hold None keep it: there, null is a value."""
    names: set[str] = set()
    for name, field in model.model_fields.items():
        if type(None) not in get_args(field.annotation) and field.annotation is not Any:
            names.update({name, field.alias or name})
    return frozenset(names)


class Empty(Model):
    """A field whose presence is its whole meaning (`apr: {}`, `never: {}`): it holds
    nothing."""


class ResourceRef(Model):
    """A reference to another resource by name and namespace.

    An empty namespace means "the namespace of the resource that holds the reference"
    (the established gateway's rule); `refs.py` in the translator applies it.
    """

    name: str
    namespace: str = ""


class Metadata(Model):
    """The orchestrator's object metadata. The fields the orchestrator itself writes are
    accepted so that `kubectl get -o yaml` output can be dropped into a folder as is.
    A name is a DNS-1123 subdomain and a namespace a DNS-1123 label, as in the orchestrator."""

    name: ResourceName
    namespace: NamespaceName = "default"
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    resource_version: str | None = None
    generation: int | None = None
    uid: str | None = None
    creation_timestamp: Any = None
    deletion_timestamp: Any = None
    deletion_grace_period_seconds: int | None = None
    generate_name: str | None = None
    self_link: str | None = None
    # Tuples: kept and shown, never read, and every resource has them (empty).
    owner_references: tuple[dict[str, Any], ...] = Field(default_factory=tuple)
    finalizers: tuple[str, ...] = Field(default_factory=tuple)
    managed_fields: tuple[dict[str, Any], ...] = Field(default_factory=tuple)


class Resource(Model):
    """A top-level manifest: `apiVersion`, `kind`, `metadata`, `spec`.

    Subclasses set `API_VERSION` and `KIND` and type `spec`. A `status` written by a
    controller (for example in `kubectl get -o yaml` output) is accepted and ignored:
    statuses are computed, never read back.
    """

    API_VERSION: ClassVar[str] = ""
    KIND: ClassVar[str] = ""
    PLURAL: ClassVar[str] = ""
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ()
    #: Manifest keys whose values are secrets wherever they sit in the resource (a
    #: basic-auth hash): views of the resource (the admin API, gwctl) redact them.
    SECRET_FIELDS: ClassVar[frozenset[str]] = frozenset()

    api_version: str
    kind: str
    metadata: Metadata
    status: Any = None

    @cached_property
    def key(self) -> ResourceKey:
        """Computed once: models are frozen (pydantic leaves it out of equality and dumps)."""
        return ResourceKey(self.KIND, self.metadata.namespace, self.metadata.name)


class ResourceKey(tuple[str, str, str]):
    """(kind, namespace, name): how the store and the translator identify a resource."""

    def __new__(cls, kind: str, namespace: str, name: str) -> ResourceKey:
        return tuple.__new__(cls, (kind, namespace, name))  # not super(): made very often

    def __getnewargs__(self) -> tuple[str, str, str]:
        """What pickle and `copy` make a key again with (a tuple's own gives the tuple as
        one argument, which `__new__` does not take)."""
        return (self[0], self[1], self[2])

    # The tuple's own item getters, in C: keys are read millions of times in a
    # translation of 100,000 resources, twice as fast as a Python property.
    if TYPE_CHECKING:

        @property
        def kind(self) -> str: ...

        @property
        def namespace(self) -> str: ...

        @property
        def name(self) -> str: ...

    else:
        kind = property(itemgetter(0))
        namespace = property(itemgetter(1))
        name = property(itemgetter(2))

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}.{self.name}"

    def __repr__(self) -> str:
        return f"ResourceKey({self.kind!r}, {self.namespace!r}, {self.name!r})"
