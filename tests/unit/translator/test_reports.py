"""Status reasons in the established reporter's text shape (REFERENCE.md §2.2), and findings
handed back as values from a scope."""

from __future__ import annotations

from gw.api import ResourceKey
from gw.api.status import State
from gw.translator.reports import Finding, Reports, ResourceReport


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


def test_a_scope_records_apart_and_sees_its_parent() -> None:
    """A scope's findings are handed back as a value; asked whether a resource is
    rejected, it answers from its parent's findings too."""
    parent = Reports()
    option = ResourceKey("RouteOption", "default", "bad")
    vs = ResourceKey("VirtualService", "default", "web")
    parent.of(option).error("spec.options", "broken")
    parent.of(vs).warning("metadata", "duplicate")
    scope = parent.scope()
    assert scope.rejected(option) and scope.state(vs) is State.WARNING
    scope.of(vs).error("spec.virtualHost", "bad")
    scope.of(vs).warning("metadata", "duplicate")
    assert not parent.rejected(vs) and scope.rejected(vs)
    assert scope.findings() == (
        (vs, (Finding("spec.virtualHost", "bad"),), (Finding("metadata", "duplicate"),)),
    )
    parent.add(scope.findings())
    assert parent.of(vs).errors == (Finding("spec.virtualHost", "bad"),)
    assert parent.of(vs).warnings == (Finding("metadata", "duplicate"),)  # not twice


def test_rejected_among_answers_as_rejected_one_by_one() -> None:
    """Reports of their own answer from the resources they hold errors for, a scope key
    by key (recording what it saw): both give what `rejected` gives for each key."""
    parent = Reports()
    keys = [ResourceKey("VirtualService", "default", f"vs-{i}") for i in range(6)]
    parent.of(keys[0]).error("spec", "bad")
    parent.of(keys[1]).warning("spec", "careful")
    parent.of(keys[2])  # a report without findings
    unasked = ResourceKey("Upstream", "default", "broken")
    parent.of(unasked).error("spec", "bad")
    assert parent.rejected_among(keys) == {k for k in keys if parent.rejected(k)} == {keys[0]}
    seen: dict[ResourceKey, State] = {}
    scope = parent.scope(seen)
    scope.of(keys[3]).error("spec", "bad in the scope")
    assert scope.rejected_among(iter(keys)) == {keys[0], keys[3]}
    assert set(seen) == set(keys) - {keys[3]}  # asked of the parent: recorded
