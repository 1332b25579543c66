"""What the extauth server answers Envoy, independent of protobuf: `Allow` (with headers for
the upstream) or `Deny` (a response for the browser), for a `Request`."""

from __future__ import annotations

from dataclasses import dataclass

NO_STORE = ("cache-control", "no-store")


@dataclass(frozen=True, slots=True)
class Request:
    """What the flow reads of a request: its path (with the query) and its cookies (the
    only header Envoy sends along, see `envoy/extauth.py`)."""

    path: str
    cookies: dict[str, str]


@dataclass(frozen=True, slots=True)
class Allow:
    #: Headers set on the request to the upstream.
    headers: tuple[tuple[str, str], ...] = ()
    #: `set-cookie` values added to the response to the browser (after a refresh).
    set_cookies: tuple[str, ...] = ()


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
