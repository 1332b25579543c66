"""RE2, the regex engine Envoy uses: patterns are checked here so that a bad one becomes a
status on the resource, never a NACK from Envoy."""

from __future__ import annotations

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


class RegexError(ValueError):
    pass


def capture_groups(pattern: str) -> int:
    """The number of capture groups in `pattern`; RegexError when RE2 refuses it."""
    try:
        return int(re2.compile(pattern, _OPTIONS).groups)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        raise RegexError(f"invalid regex {pattern!r}: {detail}") from None
