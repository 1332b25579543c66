"""Shared fixtures: real processes on free loopback ports, always cleaned up."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Echo, GwUp


def pytest_configure(config: pytest.Config) -> None:
    """Processes the tests start are stopped with SIGINT, as a user's Ctrl-C would. A test
    run started in the background by a non-interactive shell inherits SIGINT ignored, and
    every child would inherit that in turn and never stop: give the run the default back."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
