"""`extauth` on virtual host or route options: which AuthConfig guards the traffic."""

from __future__ import annotations

from gw.api.meta import Model, ResourceRef


class CustomAuth(Model):
    context_extensions: dict[str, str] = {}
    name: str | None = None


class ExtAuthExtension(Model):
    """Exactly one of `disable`, `configRef`, `customAuth`."""

    disable: bool = False
    config_ref: ResourceRef | None = None
    custom_auth: CustomAuth | None = None
