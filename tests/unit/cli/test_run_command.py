"""`run_command`: how a server command's run ends."""

from __future__ import annotations

import gc
import sys

import pytest
import typer

from gw.cli.gw import SWITCH_INTERVAL, run_command
from gw.lifecycle import Failure


def test_what_a_command_made_is_left_out_of_the_last_collections() -> None:
    """The interpreter's last collections at exit walk every object not frozen: after a
    control plane stopped during a large translation, about 2.7 s at 100,000
    VirtualServices. Once the servers stopped, what is left is frozen, failure or not."""
    kept: list[list[int]] = []

    async def serve() -> None:
        kept.extend([i] for i in range(1000))

    async def fail() -> None:
        kept.extend([i] for i in range(1000))
        raise Failure("xds", OSError("address in use"))

    try:
        before = gc.get_freeze_count()
        run_command(serve())
        assert gc.get_freeze_count() >= before + 1000
        gc.unfreeze()
        before = gc.get_freeze_count()
        with pytest.raises(typer.Exit) as exited:
            run_command(fail())
        assert exited.value.exit_code == 1
        assert gc.get_freeze_count() >= before + 1000
    finally:
        gc.unfreeze()


def test_threads_hand_the_interpreter_over_within_the_switch_interval() -> None:
    """The control plane's reads and translations run in threads of their own; the event
    loop's thread gets the interpreter back within 1 ms, not Python's default 5 ms, for
    the process's whole run (stopping included, which a translation may outlive)."""
    seen: list[float] = []

    async def serve() -> None:
        seen.append(sys.getswitchinterval())

    interval = sys.getswitchinterval()
    try:
        run_command(serve())
        assert seen == [SWITCH_INTERVAL]
        assert sys.getswitchinterval() == SWITCH_INTERVAL
    finally:
        sys.setswitchinterval(interval)
        gc.unfreeze()
