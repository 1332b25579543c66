"""`headerManipulation`: add and remove request and response headers (vhost or route)."""

from __future__ import annotations

from gw.api.meta import Model, ResourceRef


class HeaderValue(Model):
    key: str
    value: str = ""


class HeaderValueOption(Model):
    """A header to add. `append` defaults to true: add another value when the header
    exists; false replaces it (the established gateway's default)."""

    header: HeaderValue | None = None
    header_secret_ref: ResourceRef | None = None
    append: bool | None = None


class HeaderManipulation(Model):
    request_headers_to_add: list[HeaderValueOption] = []
    request_headers_to_remove: list[str] = []
    response_headers_to_add: list[HeaderValueOption] = []
    response_headers_to_remove: list[str] = []
