"""Status reasons in the established reporter's text shape (REFERENCE.md §2.2)."""

from __future__ import annotations

from gw.api.status import State
from gw.translator.reports import ResourceReport


def test_accepted_has_no_reason() -> None:
    report = ResourceReport()
    assert report.state is State.ACCEPTED and report.reason() == ""


def test_one_error() -> None:
    report = ResourceReport()
    report.error("spec.x", "bad")
    assert report.state is State.REJECTED
    assert report.reason() == "1 error occurred:\n\t* spec.x: bad\n\n"


def test_errors_and_warnings() -> None:
    report = ResourceReport()
    report.error("a", "one")
    report.error("b", "two")
    report.error("b", "two")  # the same finding twice counts once
    report.warning("", "careful")
    assert report.reason() == (
        "2 errors occurred:\n\t* a: one\n\t* b: two\n\n\nwarning: \n  careful"
    )


def test_only_warnings() -> None:
    report = ResourceReport()
    report.warning("w", "one")
    report.warning("w", "two")
    assert report.state is State.WARNING
    assert report.reason() == "warning: \n  w: one\nw: two"
