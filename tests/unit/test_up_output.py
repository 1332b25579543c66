"""What `gw up` prints for statuses (`StatusPrinter`)."""

from __future__ import annotations

import io

from gw.api import ResourceKey
from gw.api.status import State, Status
from gw.snapshot import Snapshot
from gw.up import STATUS_LINES, StatusPrinter


def printed(changed: dict[ResourceKey, Status | None]) -> list[str]:
    out = io.StringIO()
    StatusPrinter(out)(changed, Snapshot())
    return out.getvalue().splitlines()


def vs(n: int) -> ResourceKey:
    return ResourceKey("VirtualService", "default", f"vs-{n:03}")


ACCEPTED = Status(state=State.ACCEPTED)
REJECTED = Status(state=State.REJECTED, reason="1 error occurred:\n* a.yaml: unknown field\n")


def test_each_status_gets_a_line_up_to_the_limit() -> None:
    changed: dict[ResourceKey, Status | None] = {vs(n): ACCEPTED for n in range(STATUS_LINES)}
    changed[vs(0)] = REJECTED
    lines = printed(changed)
    assert len(lines) == STATUS_LINES
    assert lines[0] == "VirtualService default.vs-000: Rejected: a.yaml: unknown field"
    assert lines[1] == "VirtualService default.vs-001: Accepted"


def test_beyond_the_limit_what_is_wrong_is_listed_and_the_rest_counted() -> None:
    """At the start over 100,000 VirtualServices, 100,000 lines of `Accepted` would bury
    the few that are not."""
    changed: dict[ResourceKey, Status | None] = {vs(n): ACCEPTED for n in range(1200)}
    changed[vs(7)] = REJECTED
    changed[vs(9)] = None
    assert printed(changed) == [
        "VirtualService default.vs-007: Rejected: a.yaml: unknown field",
        "VirtualService default.vs-009: deleted",
        "1,200 statuses changed (1,198 Accepted, 1 Rejected, 1 deleted); 1,198 not listed "
        "here: `gwctl get <kind>` lists them, `gwctl check` shows what is wrong",
    ]


def test_no_more_than_the_limit_of_lines_whatever_is_wrong() -> None:
    changed: dict[ResourceKey, Status | None] = {vs(n): REJECTED for n in range(120)}
    lines = printed(changed)
    assert len(lines) == STATUS_LINES + 1
    assert lines[-1].startswith("120 statuses changed (120 Rejected); 70 not listed here")
