"""`StatusBook`: which statuses changed, comparing only what a translation redid when it can."""

from __future__ import annotations

from gw.api import ResourceKey
from gw.api.status import State, Status
from gw.store.status import StatusBook

A = ResourceKey("VirtualService", "default", "a")
B = ResourceKey("VirtualService", "default", "b")
ACCEPTED = Status(state=State.ACCEPTED, reason="")
REJECTED = Status(state=State.REJECTED, reason="spec: wrong")


def test_a_full_write_reports_changes_and_removals() -> None:
    book = StatusBook()
    assert book.write({A: ACCEPTED, B: ACCEPTED}) == {A: ACCEPTED, B: ACCEPTED}
    assert book.write({A: REJECTED}) == {A: REJECTED, B: None}
    assert book.all() == {A: REJECTED}


def test_only_the_restated_keys_are_compared_after_the_last_write() -> None:
    book = StatusBook()
    first = {A: ACCEPTED, B: ACCEPTED}
    book.write(first)
    second = {A: REJECTED}  # B removed, A changed: both restated
    assert book.write(second, {A, B}, since=first) == {A: REJECTED, B: None}
    assert book.all() == {A: REJECTED}
    # A key left out of `keys` is not looked at: the translation said it did not change.
    third = {A: ACCEPTED, B: ACCEPTED}
    assert book.write(third, {A}, since=second) == {A: ACCEPTED}


def test_keys_from_another_starting_point_compare_everything() -> None:
    book = StatusBook()
    book.write({A: ACCEPTED, B: ACCEPTED})
    elsewhere = {A: ACCEPTED, B: ACCEPTED}  # equal, but not what was written
    assert book.write({A: ACCEPTED, B: REJECTED}, {A}, since=elsewhere) == {B: REJECTED}
    assert book.write({A: ACCEPTED}, {A}) == {B: None}  # no `since`: everything
