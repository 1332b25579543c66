"""`run_command`: how a server command's run ends."""

from __future__ import annotations

import gc

import pytest
import typer

from gw.cli.gw import run_command
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
