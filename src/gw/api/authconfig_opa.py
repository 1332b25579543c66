"""`opaAuth` of an AuthConfig: a Rego policy decides, evaluated in gw's extauth server.

The policy's modules live in ConfigMaps (`modules`, every data entry a module, as
`kubectl create configmap NAME --from-file=policy.rego` makes them); `query` must come out
true (or an array whose first element is true) for the request to be allowed."""

from __future__ import annotations

from gw.api.meta import Model, ResourceRef


class OpaAuthOptions(Model):
    fast_input_conversion: bool = False
    return_decision_reason: bool = False


class OpaAuth(Model):
    modules: list[ResourceRef] = []
    query: str
    options: OpaAuthOptions | None = None
