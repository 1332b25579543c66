"""Azure Functions: the `azure` Upstream (a function app and its functions) and the route's
`destinationSpec.azure` (which function it calls)."""

from __future__ import annotations

from typing import Literal

from gw.api.meta import Model, ResourceRef


class AzureFunctionSpec(Model):
    function_name: str = ""
    auth_level: Literal["Anonymous", "Function", "Admin"] = "Anonymous"


class AzureUpstreamSpec(Model):
    function_app_name: str = ""
    #: The app's keys, in the established CLI's shape (`azure: {apiKeys: {...}}`).
    secret_ref: ResourceRef | None = None
    functions: list[AzureFunctionSpec] = []


class AzureDestinationSpec(Model):
    function_name: str = ""
