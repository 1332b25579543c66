"""Headers added and removed at a virtual host or route, upstream and downstream."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderValue:
    """A header to add. `value` may hold Envoy `%COMMAND%` substitutions (checked in stage 1);
    `append` adds another value when the header exists, else the value replaces it."""

    name: str
    value: str
    append: bool = True
    #: The header secret (`namespace.name`) the value comes from: views redact the value.
    secret: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderManipulation:
    """Headers added and removed at a virtual host or route, when the request is sent
    upstream (after every filter) and when the response is sent downstream."""

    request_headers_to_add: tuple[HeaderValue, ...] = ()
    request_headers_to_remove: tuple[str, ...] = ()
    response_headers_to_add: tuple[HeaderValue, ...] = ()
    response_headers_to_remove: tuple[str, ...] = ()
