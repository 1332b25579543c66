"""The path routes are matched against, as the connection manager makes it (the options gw
sets): an escaped slash (`%2F`, `%5C`) answers 307 to the unescaped path; `\\` becomes `/`,
percent-encoded unreserved characters are decoded, `.` and `..` segments resolved
(`normalize_path`); runs of slashes become one (`merge_slashes`). The query is matched as
sent. Each rule checked against Envoy 1.40 (tests/e2e/test_explain.py).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_ESCAPED_SLASH = re.compile(r"%(2[fF]|5[cC])")
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")


@dataclass(frozen=True, slots=True)
class PreparedPath:
    #: The path routes are matched against (normalized, without the query).
    path: str
    query: str
    #: Set when the connection manager answers with a redirect to this path instead.
    redirect: str | None = None
    #: What normalization changed, for the explanation.
    changes: tuple[str, ...] = ()


def prepare_path(
    target: str, *, normalize: bool, merge_slashes: bool, unescape_and_redirect: bool
) -> PreparedPath:
    path, _, query = target.partition("?")
    path = path.partition("#")[0]
    changes = []
    redirect = False
    if unescape_and_redirect and _ESCAPED_SLASH.search(path):
        path = _ESCAPED_SLASH.sub(lambda m: "/" if m.group(1) in ("2f", "2F") else "\\", path)
        redirect = True
        changes.append("escaped slashes unescaped (answered with a redirect)")
    if normalize:
        normalized = _normalize(path)
        if normalized != path:
            changes.append(f"normalized from {path}")
        path = normalized
    if merge_slashes:
        merged = re.sub(r"/{2,}", "/", path)
        if merged != path:
            changes.append("repeated slashes merged")
        path = merged
    location = path + (f"?{query}" if query else "") if redirect else None
    return PreparedPath(path=path, query=query, redirect=location, changes=tuple(changes))


def _normalize(path: str) -> str:
    """RFC 3986 normalization as Envoy does it: `\\` to `/`, unreserved characters decoded
    (other escapes upper-cased), dot segments removed."""
    path = path.replace("\\", "/")

    def decode(m: re.Match[str]) -> str:
        char = chr(int(m.group(1), 16))
        return char if char in _UNRESERVED else f"%{m.group(1).upper()}"

    path = _PERCENT.sub(decode, path)
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments[1:], start=1):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                out.append("")
        elif segment == "..":
            if out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def query_params(query: str) -> list[tuple[str, str]]:
    pairs = []
    for part in query.split("&"):
        if part:
            name, _, value = part.partition("=")
            pairs.append((name, value))
    return pairs
