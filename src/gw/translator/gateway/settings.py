"""What gw does with each field of the Settings it reads, and a status for those it does not
act on.

Settings written for the established gateway carry many fields about how that gateway is
deployed (bind addresses of its servers, its validation server, Consul, Vault). gw acts on
what has a meaning here and gives every other field a warning on the Settings saying why it
has no effect and what does the job under gw — a warning, never an error: a rejected
Settings would take down every host tied to it, for a field that changes nothing.

Acted on here: `gloo.invalidConfigPolicy` (routes gw cannot build answer a fixed response,
`invalid_route_response`), `gloo.disableKubernetesDestinations` (routes may not address
services directly), `gloo.disableGrpcWeb` / `removeUnusedFilters` (`build.Build.grpc_web`),
`gateway.translateEmptyGateways`, and `gloo` under its neutral name `gw`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gw import api
from gw.api.settings import GlooOptions
from gw.translator import ir
from gw.translator.reports import ResourceReport

_COMMAND_LINE = (
    "no effect under gw: the xDS server listens where the command line says (gw up --bind "
    "and --xds-port, gw controlplane --bind and --xds-port)"
)
_WEBHOOK = (
    "no effect under gw: resources are validated in the control plane itself; with --orch "
    "the validation webhook is set on gw controlplane's command line (--webhook-port, "
    "--allow-warnings)"
)
_SOURCES = (
    "no effect under gw: resources, secrets and artifacts are read from where the command "
    "line says (a folder, or the orchestrator with --orch)"
)
_NO_SECRET_BACKEND = (
    "not supported: gw reads Secrets from the folder it serves or from the orchestrator; "
    "Vault, Consul and directory secret sources are not built (this field is ignored)"
)
_TRANSFORMATIONS = "no effect: gw's transformations have no such switch"

#: Fields with no effect whatever their value: manifest path → why.
_NO_EFFECT: dict[str, str] = {
    "gloo.xdsBindAddr": _COMMAND_LINE,
    "gloo.restXdsBindAddr": "no effect: gw serves xDS over gRPC (ADS) only, never over REST",
    "gloo.validationBindAddr": _WEBHOOK,
    "gloo.proxyDebugBindAddr": (
        "no effect under gw: Proxies are served by the control plane's admin API (port 9091, "
        "/snapshots/proxy-resources; gwctl get proxy)"
    ),
    "gloo.circuitBreakers": (
        "no effect in gw: Upstreams without their own circuit breakers keep Envoy's defaults"
    ),
    "gloo.endpointsWarmingTimeout": (
        "no effect: gw serves a proxy's configuration as soon as it is translated, endpoints "
        "included"
    ),
    "gloo.awsOptions": "no effect in gw: it builds no AWS upstreams",
    "gloo.regexMaxProgramSize": (
        "no effect under gw: every regex is checked against Envoy's own limit (program size "
        "100, Envoy's runtime key re2.max_program_size.error_level), the one Envoy enforces"
    ),
    "gloo.failoverUpstreamDnsPollingInterval": "no effect in gw: it builds no failover",
    "gloo.logTransformationRequestResponseInfo": _TRANSFORMATIONS,
    "gloo.transformationEscapeCharacters": _TRANSFORMATIONS,
    "gloo.enableAutoWebsocketTransformationPassthrough": _TRANSFORMATIONS,
    "gloo.istioOptions": "no effect: gw has no Istio integration",
    "gateway.validationServerAddr": _WEBHOOK,
    "gateway.validation": _WEBHOOK,
    "gateway.compressedProxySpec": "no effect: gw keeps Proxies in memory, never written",
    "gateway.virtualServiceOptions": (
        "no effect in gw: each VirtualService's sslConfig says whether it asks for client "
        "certificates"
    ),
    "gateway.isolateVirtualHostsBySslConfig": (
        "no effect: gw serves TLS virtual hosts on their own filter chains (by SNI) already"
    ),
    "gateway.alwaysSortRouteTableRoutes": "no effect: deprecated, and gw sorts by weight",
    "refreshRate": (
        "no effect: gw acts on each change as it happens (file and orchestrator watches), "
        "never on a timer"
    ),
    "discovery.fdsMode": "no effect: gw does no function discovery",
    "discovery.fdsOptions": "no effect: gw does no function discovery",
    "linkerd": "no effect: gw has no Linkerd integration",
    "observabilityOptions": (
        "no effect: gw's metrics are the control plane's /metrics and Envoy's /stats"
    ),
    "upstreamOptions": "no effect in gw: each Upstream says how it is reached",
    "kubernetesConfigSource": _SOURCES,
    "kubernetesSecretSource": _SOURCES,
    "kubernetesArtifactSource": _SOURCES,
    "directoryArtifactSource": _SOURCES,
    "consulKvSource": _SOURCES,
    "consulKvArtifactSource": _SOURCES,
    "secretOptions": _NO_SECRET_BACKEND,
    "vaultSecretSource": _NO_SECRET_BACKEND,
    "directorySecretSource": _NO_SECRET_BACKEND,
    "watchNamespaceSelectors": "not supported: list the namespaces in watchNamespaces",
    "consul": "not supported: gw discovers services from the folder or the orchestrator",
    "consulDiscovery": "not supported: gw discovers services from the folder or the orchestrator",
    "kubernetes": "no effect: gw's orchestrator client has no request rate limit to set",
    "extensions": "not supported: gw has no extension plugins",
    "cachingServer": "not supported: gw has no caching server (see docs/gateways.md)",
    "ipV4Only": "no effect: gw's listeners bind the bindAddress their Gateway names",
    "consoleOptions": "not supported: gw has no console",
    "knative": "not supported: gw has no Knative integration",
}
#: Fields with no effect when set to a value other than gw's behaviour: path → (gw's, why).
_NO_EFFECT_UNLESS: dict[str, tuple[object, str]] = {
    "gloo.enableRestEds": (False, "no effect: gw serves endpoints over ADS (gRPC) only"),
    "gloo.disableProxyGarbageCollection": (
        False,
        "no effect: a proxy no Gateway names any more is served an empty configuration",
    ),
    "gateway.readGatewaysFromAllNamespaces": (
        True,
        "no effect: gw reads Gateways from every namespace it watches",
    ),
    "gateway.persistProxySpec": (False, "no effect: gw keeps Proxies in memory, never written"),
    "gateway.enableGatewayController": (True, "no effect: gw always translates Gateways"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutePolicy:
    """What the Settings say about routes: the response of a route gw cannot build (None:
    such a route rejects its resource) and whether routes may address services directly."""

    invalid_route: ir.DirectResponse | None = None
    orch_destinations: bool = True


#: Without Settings: routes gw cannot build reject their resource; services are addressable.
DEFAULT_ROUTES = RoutePolicy()


def control_plane_options(settings: api.Settings | None) -> GlooOptions | None:
    """`spec.gloo` (or the same under its neutral name `gw`)."""
    if settings is None:
        return None
    return settings.spec.gloo or settings.spec.gw


def route_policy(settings: api.Settings | None) -> RoutePolicy:
    gloo = control_plane_options(settings)
    if gloo is None:
        return RoutePolicy()
    policy = gloo.invalid_config_policy
    invalid = None
    if policy is not None and policy.replace_invalid_routes:
        invalid = ir.DirectResponse(
            status=policy.invalid_route_response_code, body=policy.invalid_route_response_body
        )
    return RoutePolicy(
        invalid_route=invalid, orch_destinations=not gloo.disable_kubernetes_destinations
    )


def check_settings(settings: api.Settings, report: ResourceReport) -> None:
    """Findings on the user's Settings: a warning per field gw does not act on."""
    spec = settings.spec
    if spec.gloo is not None and spec.gw is not None:
        report.error("spec.gw", "set the control plane's options once, in spec.gloo")
    data = spec.model_dump(by_alias=True, exclude_unset=True)
    if "gw" in data and "gloo" not in data:
        data["gloo"] = data.pop("gw")
    for path, why in _NO_EFFECT.items():
        if _value(data, path) is not None:
            report.warning(f"spec.{path}", why)
    for path, (own, why) in _NO_EFFECT_UNLESS.items():
        value = _value(data, path)
        if value is not None and value != own:
            report.warning(f"spec.{path}", why)
    gloo = control_plane_options(settings)
    policy = gloo.invalid_config_policy if gloo else None
    if policy is not None and not 200 <= policy.invalid_route_response_code <= 599:
        report.error(
            "spec.gloo.invalidConfigPolicy.invalidRouteResponseCode",
            f"{policy.invalid_route_response_code} is not an HTTP status (200-599)",
        )


def _value(data: dict[str, Any], path: str) -> Any:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node
