"""CORS policies of virtual hosts and routes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class CorsPolicy:
    """A CORS policy; `disabled` switches CORS handling off (a route's `disableForRoute`)."""

    allow_origins: tuple[str, ...] = ()
    allow_origin_regexes: tuple[str, ...] = ()
    allow_methods: tuple[str, ...] = ()
    allow_headers: tuple[str, ...] = ()
    expose_headers: tuple[str, ...] = ()
    max_age: str | None = None
    allow_credentials: bool | None = None
    disabled: bool = False
