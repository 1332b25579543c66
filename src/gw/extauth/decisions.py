"""What the extauth server answers Envoy, independent of protobuf: `Allow` (with headers for
the upstream) or `Deny` (a response for the client), for a `Request`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from gw.extauth.cookies import parse_cookies

NO_STORE = ("cache-control", "no-store")
#: The chain's state: what one step learnt (an OIDC identity, an API key's metadata), for
#: the steps after it (a passthrough service sees it). JSON values.
State = dict[str, Any]


class Request:
    """What a check reads of a request. `headers` are the ones Envoy sends along (names in
    lowercase; only those some check of the listener needs, see `envoy/extauth.py`),
    `metadata` the dynamic metadata it sends (namespace → value, read when a check asks),
    and `check_request` Envoy's whole CheckRequest (for a gRPC passthrough). Built once per
    check from the protobuf without copying it; the cookies are parsed on first use."""

    __slots__ = ("path", "method", "host", "headers", "body", "check_request", "_cookies", "_md")

    def __init__(
        self,
        path: str,
        *,
        method: str = "GET",
        host: str = "",
        headers: Mapping[str, str] | None = None,
        body: str = "",
        cookies: dict[str, str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        check_request: Any = None,
    ) -> None:
        self.path = path
        self.method = method
        self.host = host
        self.headers: Mapping[str, str] = headers if headers is not None else {}
        self.body = body
        self.check_request = check_request
        self._cookies = cookies
        self._md = metadata

    @property
    def cookies(self) -> dict[str, str]:
        if self._cookies is None:
            header = self.headers.get("cookie")
            self._cookies = parse_cookies(header) if header else {}
        return self._cookies

    @property
    def metadata(self) -> Mapping[str, Any]:
        """Dynamic metadata by namespace, as plain data (converted on first use)."""
        if self._md is None:
            self._md = {}
            if self.check_request is not None:
                context = self.check_request.attributes.metadata_context.filter_metadata
                self._md = {ns: json_format.MessageToDict(v) for ns, v in context.items()}
        return self._md


@dataclass(frozen=True, slots=True)
class Allow:
    #: Headers set on the request to the upstream (replacing what the client sent).
    headers: tuple[tuple[str, str], ...] = ()
    #: Headers added to the request to the upstream (next to what the client sent).
    append_headers: tuple[tuple[str, str], ...] = ()
    #: Request headers removed before the upstream sees them.
    remove_headers: tuple[str, ...] = ()
    #: `set-cookie` values added to the response to the browser (after a refresh).
    set_cookies: tuple[str, ...] = ()
    #: Headers set on the response to the client.
    response_headers: tuple[tuple[str, str], ...] = ()
    #: Dynamic metadata for the filters after ext_authz: key → JSON text of the value.
    metadata: tuple[tuple[str, str], ...] = ()
    #: Who the request is from, when a step identified a user (an API key's secret name).
    user: str | None = None
    #: Until when (Unix seconds) the session that allowed it stays valid, if a session
    #: did: a session pass (`session_pass.py`) never outlives it.
    valid_until: float | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    status: int
    body: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    set_cookies: tuple[str, ...] = ()


Decision = Allow | Deny


def text(status: int, body: str, set_cookies: tuple[str, ...] = (), *, retry: bool = False) -> Deny:
    """A plain-text denial (bodies are short sentences, docs/extauth.md lists them all)."""
    headers = [("content-type", "text/plain"), NO_STORE]
    if retry:
        headers.append(("retry-after", "5"))
    return Deny(status, body=body, headers=tuple(headers), set_cookies=set_cookies)


def merge(allows: list[Allow]) -> Allow:
    """What a chain of allowing steps adds up to: every step's headers, in order (a later
    step's value of a header replaces an earlier one's), the last user identified."""
    if len(allows) == 1:
        return allows[0]
    headers: dict[str, str] = {}
    users = [a.user for a in allows if a.user is not None]
    for allow in allows:
        headers.update(allow.headers)
    return Allow(
        headers=tuple(headers.items()),
        append_headers=tuple(h for a in allows for h in a.append_headers),
        remove_headers=tuple(dict.fromkeys(h for a in allows for h in a.remove_headers)),
        set_cookies=tuple(c for a in allows for c in a.set_cookies),
        response_headers=tuple(h for a in allows for h in a.response_headers),
        metadata=tuple(m for a in allows for m in a.metadata),
        user=users[-1] if users else None,
        valid_until=min((a.valid_until for a in allows if a.valid_until is not None), default=None),
    )
