"""Azure Functions: the `azure` Upstream (a function app and its functions) and the route's
`destinationSpec.azure` (which function it calls)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from gw.api.meta import Model, ResourceRef

AuthLevel = Literal["Anonymous", "Function", "Admin"]
#: The protobuf enum's numbers, which manifests may use instead of the names.
_AUTH_LEVELS: tuple[AuthLevel, ...] = ("Anonymous", "Function", "Admin")


class AzureFunctionSpec(Model):
    function_name: str = ""
    auth_level: AuthLevel = "Anonymous"

    @field_validator("auth_level", mode="before")
    @classmethod
    def _by_number(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 3:
            return _AUTH_LEVELS[value]
        return value


class AzureUpstreamSpec(Model):
    function_app_name: str = ""
    #: The app's keys (`glooctl create secret azure` shape: `azure: {apiKeys: {...}}`).
    secret_ref: ResourceRef | None = None
    functions: list[AzureFunctionSpec] = []


class AzureDestinationSpec(Model):
    function_name: str = ""
