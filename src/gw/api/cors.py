"""`cors` on virtual hosts and routes: the established CorsPolicy fields."""

from __future__ import annotations

from gw.api.meta import Model


class CorsPolicy(Model):
    allow_origin: list[str] = []
    allow_origin_regex: list[str] = []
    allow_methods: list[str] = []
    allow_headers: list[str] = []
    expose_headers: list[str] = []
    max_age: str | None = None
    allow_credentials: bool | None = None
    #: Route level only: no CORS handling on this route, whatever the virtual host says.
    disable_for_route: bool = False
