"""`gw.collector.paused`: the store's reading thread and the translation thread pause the
cyclic garbage collector, possibly at once; it runs again when the last is done, and only
if it ran before."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gw import collector


@pytest.fixture
def collecting() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_overlapping_pauses_resume_once_the_last_ends(collecting: None) -> None:
    first, second = collector.paused(), collector.paused()
    first.__enter__()
    assert not gc.isenabled()
    second.__enter__()
    first.__exit__(None, None, None)  # the other pause still runs
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_collector_paused_by_someone_else_stays_paused(collecting: None) -> None:
    gc.disable()
    with collector.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_runs_again_after_an_exception(collecting: None) -> None:
    with pytest.raises(RuntimeError), collector.paused():
        raise RuntimeError("translation failed")
    assert gc.isenabled()


def test_a_freezing_process_freezes_what_the_pause_made(collecting: None) -> None:
    """The control plane's policy: what a read or a translation made is not scanned by the
    next young collection (the control plane's own full collections take it)."""
    collector.freezing(True)
    try:
        with collector.paused():
            made = [[] for _ in range(1000)]
        assert gc.get_freeze_count() >= len(made)
    finally:
        collector.freezing(False)
        gc.unfreeze()
