"""The IR package: every type reachable as `ir.Name`, and a Proxy that survives a dump and
a load through its own annotations (what `TypeAdapter(ir.Proxy)` users rely on)."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import shutil
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from gw.discovery import ServiceDiscovery
from gw.store.directory import DirectoryStore
from gw.translator import ir
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
