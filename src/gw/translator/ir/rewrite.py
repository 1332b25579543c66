"""Path and host rewrites of a forwarded request beyond `prefixRewrite` / `hostRewrite`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class RegexRewrite:
    """Every match of `regex` (RE2, checked) replaced by `substitution` (`\\1` = group 1)."""

    regex: str
    substitution: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewrites:
    #: The path rewritten by a regex (`regexRewrite`).
    path_regex: RegexRewrite | None = None
    #: The Host taken from this request header (`hostRewriteHeader`).
    host_header: str | None = None
    #: The Host made from the path by a regex (`hostRewritePathRegex`).
    host_path_regex: RegexRewrite | None = None
    #: The original Host is kept in `x-forwarded-host` when the Host is rewritten.
    append_x_forwarded_host: bool = False
