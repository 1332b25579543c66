"""A resource's status, in the established shape (REFERENCE.md §2.1).

`status.statuses.<controller namespace>` holds `state`, `reason`, `reportedBy` and the
statuses of the sub-resources (proxies) the resource contributed to.
"""

from __future__ import annotations

from enum import StrEnum

from gw.api.meta import Model


class State(StrEnum):
    PENDING = "Pending"
    ACCEPTED = "Accepted"
    REJECTED = "Rejected"
    WARNING = "Warning"


class Status(Model):
    state: State
    reason: str = ""
    reported_by: str = "gw"
    subresource_statuses: dict[str, Status] = {}
    messages: list[str] = []


class NamespacedStatuses(Model):
    """`status:` of a resource: one entry per controller namespace (`gw-system`)."""

    statuses: dict[str, Status] = {}
