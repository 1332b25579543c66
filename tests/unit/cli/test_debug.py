"""`gwctl debug logs --errors-only`: which records count as errors, in both log formats."""

from __future__ import annotations

from gw.cli.debug import error_records

LOG = [
    "2026-01-01 10:00:00,001 INFO gw.controlplane: translated 3 resources",
    "2026-01-01 10:00:00,002 ERROR gw.controlplane: translation failed",
    "Traceback (most recent call last):",
    '  File "x.py", line 1, in <module>',
    "KeyError: 'x'",
    "2026-01-01 10:00:00,003 WARNING gw.store.directory: cannot read a.yaml",
    "[2026-01-01 10:00:00.004][42][info][main] starting",
    "[2026-01-01 10:00:00.005][42][critical][main] error initializing config",
    "  with a continuation line",
    "[2026-01-01 10:00:00.006][42][debug][router] routing",
    "2026-01-01 10:00:00,007 CRITICAL gw: giving up",
]


def test_error_records_keep_their_continuation_lines() -> None:
    assert list(error_records(LOG)) == [
        "2026-01-01 10:00:00,002 ERROR gw.controlplane: translation failed",
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in <module>',
        "KeyError: 'x'",
        "[2026-01-01 10:00:00.005][42][critical][main] error initializing config",
        "  with a continuation line",
        "2026-01-01 10:00:00,007 CRITICAL gw: giving up",
    ]


def test_lines_before_any_record_are_not_errors() -> None:
    assert list(error_records(["loose line", "another"])) == []
