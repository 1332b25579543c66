"""`opaAuth`: a Rego policy, resolved by stage 1 (the ConfigMaps' modules read, the policy
compiled once there to report mistakes), that the extauth server compiles once per
configuration and queries for each request.

The input document has the established gateway's shape: `check_request` (Envoy's whole
CheckRequest), `http_request` (its `attributes.request.http`) and `state` (what the steps
before this one learnt, e.g. `state.jwt`, the ID token of an OIDC login). With
`fast_input_conversion`, `check_request` is left out and `http_request` and `state` keep only
scalars, maps of them and string arrays (cheaper to build).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class Module:
    #: `<configmap namespace>.<configmap name>/<data key>`: names it in the engine's errors.
    name: str
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OpaAuth:
    kind: Literal["opa"] = "opa"
    modules: tuple[Module, ...] = ()
    query: str
    fast_input_conversion: bool = False
    #: Allowed requests carry the decision (`allowed`, and the second element of an array
    #: result as `body`) as dynamic metadata `<step>: {reason: ...}`.
    return_decision_reason: bool = False
