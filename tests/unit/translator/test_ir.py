"""The IR package: every type reachable as `ir.Name`, and a Proxy that survives a dump and
a load through its own annotations (what `TypeAdapter(ir.Proxy)` users rely on)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import shutil
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from gw.discovery import ServiceDiscovery
from gw.store.directory import DirectoryStore
from gw.translator import ir
from gw.translator.envoy.hostfacts import HostFacts
from gw.translator.gateway.contribution import BuiltHost, Contribution
from gw.translator.gateway.hostcache import Memo
from gw.translator.gateway.jwt_stages import HostJwt
from gw.translator.ir.frozen import use_slot_setters
from gw.translator.options import Options
from gw.translator.refs import Edge, Viewed
from gw.translator.translation import translate
from tests.golden.test_golden import CASES, GOLDEN_NOW

PROXY = TypeAdapter(ir.Proxy)


def test_exports_every_type_of_its_modules_in_sorted_order() -> None:
    defined = set()
    for module in pkgutil.iter_modules(ir.__path__):
        loaded = importlib.import_module(f"{ir.__name__}.{module.name}")
        defined |= {
            name
            for name, value in vars(loaded).items()
            if dataclasses.is_dataclass(value) and value.__module__ == loaded.__name__
        }
    assert ir.__all__ == sorted(ir.__all__)
    assert set(ir.__all__) == defined


@pytest.mark.parametrize("case", sorted(CASES.glob("*.in.yaml")), ids=lambda p: p.name[:-8])
def test_a_proxy_loads_back_from_its_dump(case: Path, tmp_path: Path) -> None:
    shutil.copy(case, tmp_path / case.name)
    snapshot = ServiceDiscovery(Options().namespace)(DirectoryStore(tmp_path).scan())
    for proxy in translate(snapshot, Options(now=GOLDEN_NOW)).proxies:
        assert PROXY.validate_python(PROXY.dump_python(proxy)) == proxy


def _made_with_every_field(cls: type) -> tuple[object, dict[str, object]]:
    """An instance of `cls` with each field given a value of its own, and those values."""
    given: dict[str, object] = {f.name: object() for f in dataclasses.fields(cls)}
    return cls(**given), given


@pytest.mark.parametrize("name", ir.__all__)
def test_the_slot_setting_init_keeps_the_dataclass_signature_and_values(name: str) -> None:
    """`frozen.use_slot_setters`: the same keyword-only signature and defaults, every
    field set from its argument or its default (a factory called once per object), still
    frozen."""
    cls = getattr(ir, name)
    fields = dataclasses.fields(cls)
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in parameters] == [f.name for f in fields]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters)
    made, given = _made_with_every_field(cls)
    assert all(getattr(made, n) is v for n, v in given.items())
    required = {f.name: given[f.name] for f in fields if _required(f)}
    bare, again = cls(**required), cls(**required)
    for f in fields:
        if f.default is not dataclasses.MISSING:
            assert getattr(bare, f.name) is f.default
        elif f.default_factory is not dataclasses.MISSING:
            assert getattr(bare, f.name) == f.default_factory()
            assert getattr(bare, f.name) is not getattr(again, f.name)
    with pytest.raises(TypeError):
        cls(**given, not_a_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, fields[0].name, None)


def _required(f: dataclasses.Field[object]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def test_the_slot_setting_init_refuses_what_it_does_not_support() -> None:
    @dataclasses.dataclass(slots=True, kw_only=True)
    class Mutable:
        a: int = 0

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Checked:
        a: int = 0

        def __post_init__(self) -> None: ...

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Derived:
        a: int = 0
        b: int = dataclasses.field(init=False, default=1)

    for cls in (Mutable, Checked, Derived):
        with pytest.raises(TypeError):
            use_slot_setters(cls)


def _mixed() -> type:
    """A frozen, slotted dataclass with positional fields (one without a default, one with
    a default, one with a factory) and keyword-only ones, declared interleaved."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Mixed:
        a: object
        b: object = dataclasses.field(default=None, kw_only=True)
        c: object = 2
        d: list[object] = dataclasses.field(default_factory=list)
        e: object = dataclasses.field(default=5, kw_only=True)

    return Mixed


def test_the_slot_setting_init_takes_positional_fields_as_the_dataclass_does() -> None:
    """The translator's own records (`Memo`, `Edge`, ...) are positional: the same
    parameters in the same order and kinds, the same defaults, the same values set."""
    plain, fast = _mixed(), use_slot_setters(_mixed())
    ours = list(inspect.signature(fast.__init__).parameters.values())
    theirs = list(inspect.signature(plain.__init__).parameters.values())
    assert [(p.name, p.kind) for p in ours] == [(p.name, p.kind) for p in theirs]
    assert [p.name for p in ours] == ["self", "a", "c", "d", "b", "e"]
    for args, kwargs in (((1,), {}), ((1, 3, [4]), {"b": 6, "e": 7}), ((1,), {"e": 0})):
        made, expected = fast(*args, **kwargs), plain(*args, **kwargs)
        assert dataclasses.astuple(made) == dataclasses.astuple(expected)
    one, two = fast(1), fast(1)
    assert one.d == [] and one.d is not two.d
    with pytest.raises(TypeError):
        fast(1, 2, 3, 4)  # `b` and `e` are keyword-only
    with pytest.raises(TypeError):
        fast()
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    "cls", [Contribution, BuiltHost, Memo, HostJwt, HostFacts, Viewed, Edge], ids=repr
)
def test_the_translators_per_host_records_set_their_slots_directly(cls: type) -> None:
    """What is made once per host or reference gets the faster `__init__` too."""
    assert any(name.startswith("_set_") for name in cls.__init__.__code__.co_names)
