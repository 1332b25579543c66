"""Findings gathered during one translation, and the statuses rendered from them.

A pass takes `reports.of(key)` and records `error(field, message)` or
`warning(field, message)`, where `field` is the manifest path of the offending field. Any
error makes the resource `Rejected`; warnings alone make it `Warning`. A piece of building
that should hand its findings back as a value (one VirtualService, see
`gateway/hostcache.py`) records them in a `scope()` and returns its `findings()`, which
`add()` merges in the order they were made. The reason text
follows the established gateway's reporter (REFERENCE.md §2.2) so that scripts written for
it keep working.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gw.api import ResourceKey
from gw.api.status import State, Status

REPORTER = "gw"


@dataclass(frozen=True, slots=True)
class Finding:
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


#: Findings as a value: each resource's errors and warnings, in the order they were made.
Findings = tuple[tuple[ResourceKey, tuple[Finding, ...], tuple[Finding, ...]], ...]


@dataclass(slots=True)
class ResourceReport:
    # Tuples: a translation keeps a report for every resource, most of them empty (two
    # empty lists each were 14 MB at 100,000 VirtualServices).
    errors: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()

    def error(self, field: str, message: str) -> None:
        finding = Finding(field, message)
        if finding not in self.errors:
            self.errors = (*self.errors, finding)

    def warning(self, field: str, message: str) -> None:
        finding = Finding(field, message)
        if finding not in self.warnings:
            self.warnings = (*self.warnings, finding)

    @property
    def state(self) -> State:
        if self.errors:
            return State.REJECTED
        if self.warnings:
            return State.WARNING
        return State.ACCEPTED

    def reason(self) -> str:
        """The established multi-error text: `1 error occurred:\\n\\t* <error>\\n\\n`."""
        text = ""
        if self.errors:
            count = len(self.errors)
            noun = "error" if count == 1 else "errors"
            text = f"{count} {noun} occurred:\n" + "".join(f"\t* {e}\n" for e in self.errors)
            text += "\n"
        if self.warnings:
            warnings = "\n".join(str(w) for w in self.warnings)
            text += ("\n" if text else "") + "warning: \n  " + warnings
        return text


class Reports:
    """All findings of one translation, keyed by resource."""

    def __init__(
        self, parent: Reports | None = None, seen: dict[ResourceKey, State] | None = None
    ) -> None:
        self._reports: dict[ResourceKey, ResourceReport] = {}
        #: A scope's findings go to its own reports; whether a resource is rejected is
        #: answered from both (see `scope`).
        self._parent = parent
        #: A recording scope's answers from its parent, by resource.
        self._seen = seen
        # Statuses are immutable: resources with the same outcome share one object, which
        # keeps 10,000 accepted resources from costing 10,000 model constructions.
        self._shared: dict[tuple[State, str, tuple[str, ...]], Status] = {}

    def of(self, key: ResourceKey) -> ResourceReport:
        report = self._reports.get(key)
        if report is None:
            report = self._reports[key] = ResourceReport()
        return report

    def state(self, key: ResourceKey) -> State:
        report = self._reports.get(key)
        own = report.state if report else State.ACCEPTED
        if self._parent is None or own is State.REJECTED:
            return own
        inherited = self._parent.state(key)
        if self._seen is not None:
            self._seen[key] = inherited
        return inherited if own is State.ACCEPTED or inherited is State.REJECTED else own

    def rejected(self, key: ResourceKey) -> bool:
        return self.state(key) is State.REJECTED

    def rejected_among(self, keys: Iterable[ResourceKey]) -> set[ResourceKey]:
        """Those of `keys` that are rejected, as `rejected` tells one by one (and records,
        in a scope). Reports without a parent answer from the resources they hold errors
        for: a full build asks about every resource, and 100,000 calls are saved."""
        if self._parent is not None:
            return {k for k in keys if self.rejected(k)}
        return {k for k, report in self._reports.items() if report.errors}.intersection(keys)

    def scope(self, seen: dict[ResourceKey, State] | None = None) -> Reports:
        """Reports that record apart from these (hand them back with `findings()`) and see
        what these hold when asked whether a resource is rejected; with `seen`, each such
        answer is recorded there (what the scope's result depends on)."""
        return Reports(parent=self, seen=seen)

    def findings(self) -> Findings:
        """What these reports recorded themselves (a scope's parent's findings excluded)."""
        return tuple((key, report.errors, report.warnings) for key, report in self._reports.items())

    def add(self, findings: Findings) -> None:
        """Record `findings` (from a scope), as if they had been recorded here."""
        for key, errors, warnings in findings:
            report = self.of(key)
            for finding in errors:
                report.error(finding.field, finding.message)
            for finding in warnings:
                report.warning(finding.field, finding.message)

    def items(self) -> Iterable[tuple[ResourceKey, ResourceReport]]:
        return sorted(self._reports.items())

    def keys(self) -> Iterable[ResourceKey]:
        """The resources with a report (in no particular order)."""
        return self._reports.keys()

    def replaced(self, other: Reports, keys: Iterable[ResourceKey]) -> Reports:
        """These reports with those of `keys` taken from `other` (or dropped when it has
        none): how an incremental translation keeps what it did not redo. Reports are
        shared, never changed afterwards."""
        out = Reports()
        out._reports = dict(self._reports)
        for key in keys:
            found = other._reports.get(key)
            if found is None:
                out._reports.pop(key, None)
            else:
                out._reports[key] = found
        return out

    def same(self, other: Reports, key: ResourceKey) -> bool:
        """Whether `other` holds the same findings for `key` as these (no report is an
        empty one, as `status` reads it)."""
        mine, theirs = self._reports.get(key), other._reports.get(key)
        if mine is theirs:
            return True
        empty = ResourceReport()
        return (empty if mine is None else mine) == (empty if theirs is None else theirs)

    def status(self, key: ResourceKey, subresources: Iterable[str] = ()) -> Status:
        report = self._reports.get(key) or ResourceReport()
        shape = (report.state, report.reason(), tuple(subresources))
        status = self._shared.get(shape)
        if status is None:
            accepted = Status(state=State.ACCEPTED, reported_by=REPORTER)
            status = self._shared[shape] = Status(
                state=shape[0],
                reason=shape[1],
                reported_by=REPORTER,
                subresource_statuses={name: accepted for name in shape[2]},
            )
        return status
