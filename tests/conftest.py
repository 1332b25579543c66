"""Shared fixtures: real processes on free loopback ports, always cleaned up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Echo, GwUp


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite tests/golden/cases/*.out.yaml from the translator's output",
    )


@pytest.fixture
def echo_factory(tmp_path: Path) -> Iterator[object]:
    started: list[Echo] = []

    def start(name: str = "echo") -> Echo:
        echo = Echo(tmp_path, name)
        started.append(echo)
        return echo

    yield start
    for echo in started:
        echo.stop()


@pytest.fixture
def gw_up_factory(tmp_path: Path) -> Iterator[object]:
    started: list[GwUp] = []

    def start(folder: Path, *extra: str) -> GwUp:
        gw = GwUp(folder, tmp_path / f"home-{len(started)}", *extra)
        started.append(gw)
        return gw

    yield start
    for gw in started:
        gw.stop()
