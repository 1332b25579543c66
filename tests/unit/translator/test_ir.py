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
from gw.translator.ir.frozen import use_slot_setters
from gw.translator.options import Options
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

    @dataclasses.dataclass(frozen=True, slots=True)
    class Positional:
        a: int = 0

    for cls in (Mutable, Checked, Positional):
        with pytest.raises(TypeError):
            use_slot_setters(cls)
