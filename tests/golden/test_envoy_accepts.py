"""Real Envoy accepts the xDS of every golden case (`envoy --mode validate`).

A translator bug that Envoy would NACK — a header name it refuses, a regex too large for
its RE2 limits, a bad `%COMMAND%` — fails here instead of on a live proxy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gw.discovery import ServiceDiscovery
from gw.store.directory import DirectoryStore
from gw.translator import Options, translate
from tests.golden.test_golden import CASES
from tests.support.envoy_validate import envoy_refusal


@pytest.mark.parametrize("case", sorted(CASES.glob("*.in.yaml")), ids=lambda p: p.name[:-8])
def test_envoy_accepts_the_golden_xds(case: Path, tmp_path: Path) -> None:
    shutil.copy(case, tmp_path / case.name)
    snapshot = ServiceDiscovery(Options().namespace)(DirectoryStore(tmp_path).scan())
    result = translate(snapshot)
    assert envoy_refusal(result.xds) is None
