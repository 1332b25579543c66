"""Azure Functions: an `azure` Upstream → a cluster to its function app over TLS, and a
route's `destinationSpec.azure` → the function's path, the app's Host and the function key.

The app is `<functionAppName>.azurewebsites.net:443`. A route naming a function sends the
request to `/api/<functionName>` (the client's query string kept) with the app's Host. A
function whose `authLevel` is `Function` needs its own key or the app's `_master` key, an
`Admin` one the `_master` key: Envoy sends it in the `x-functions-key` header, which Azure
reads as it reads `?code=`. Keys come from the upstream's secret, in the shape the
established CLI writes (`create secret azure --api-keys name=key,...`): the key `azure`
holding `apiKeys: {<name>: <key>}`, as YAML or JSON.

Envoy rewrites the path per route, not per weighted cluster: a function is called only as
a route's one destination, and not together with the route's own `prefixRewrite`. A route
to the upstream without `destinationSpec` keeps its path (the app's own routes) and gets
the app's Host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml

from gw import api
from gw.api.azure import AzureFunctionSpec, AzureUpstreamSpec
from gw.api.functions import DestinationSpec
from gw.translator import ir
from gw.translator.gateway.secrets import resolve_secret
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

APP_DOMAIN = "azurewebsites.net"
HTTPS_PORT = 443
MASTER_KEY = "_master"
#: The secret's key holding the app's keys, as the established CLI stores them.
SECRET_KEY = "azure"
_APP_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,58}[a-zA-Z0-9])?")
_FUNCTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,127}")


def app_host(spec: AzureUpstreamSpec) -> str:
    return f"{spec.function_app_name}.{APP_DOMAIN}"


def check_azure_upstream(
    upstream: api.Upstream, refs: Refs, report: ResourceReport
) -> tuple[ir.Endpoint, ...]:
    """The function app's endpoint for a valid `azure` upstream; () after reporting."""
    spec = upstream.spec.azure
    assert spec is not None
    errors = len(report.errors)
    if not _APP_NAME.fullmatch(spec.function_app_name):
        report.error(
            "spec.azure.functionAppName",
            f"{spec.function_app_name!r} is not a function app name: the name the app is "
            f"reached by (<name>.{APP_DOMAIN}): letters, digits and '-'",
        )
    seen: set[str] = set()
    for i, function in enumerate(spec.functions):
        name = function.function_name
        if not _FUNCTION_NAME.fullmatch(name):
            report.error(
                f"spec.azure.functions[{i}].functionName",
                f"{name!r} is not an Azure function name (a letter, then letters, digits, "
                "'_' or '-')",
            )
        elif name in seen:
            report.error(f"spec.azure.functions[{i}].functionName", f"{name} is listed twice")
        seen.add(name)
    if spec.secret_ref is not None:
        api_keys(upstream, refs, report)
    if len(report.errors) > errors:
        return ()
    return (ir.Endpoint(address=app_host(spec), port=HTTPS_PORT),)


def api_keys(
    upstream: api.Upstream, refs: Refs, report: ResourceReport | None
) -> dict[str, str] | None:
    """The app's keys by name from the upstream's secret; problems go to `report` when
    given. None without a secret (or a usable one)."""
    spec = upstream.spec.azure
    if spec is None or spec.secret_ref is None:
        return None
    field = "spec.azure.secretRef"
    missing = "azure secrets for ref {where} not found"
    secret, key = resolve_secret(
        spec.secret_ref, upstream.key, field, refs, report, missing=missing
    )
    if secret is None:
        return None
    keys = _parsed_keys(secret.value(SECRET_KEY))
    if keys is None and report is not None:
        report.error(
            field,
            f"secret {key.namespace}.{key.name} is not an Azure secret: it needs the key "
            f"{SECRET_KEY!r} holding apiKeys: {{<function or _master>: <key>}}",
        )
    return keys


#: libyaml's safe loader where PyYAML has it: every route to a function reads the app's
#: secret again, and the pure-Python parser takes a few hundred microseconds for it.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parsed_keys(text: str | None) -> dict[str, str] | None:
    try:
        data: Any = yaml.load(text, Loader=_SAFE_LOADER) if text else None  # noqa: S506
    except yaml.YAMLError:
        return None
    keys = data.get("apiKeys") if isinstance(data, dict) else None
    if not isinstance(keys, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in keys.items()
    ):
        return None
    return keys


def resolve_function(
    upstream: api.Upstream | None,
    destination: DestinationSpec | None,
    refs: Refs,
    field: str,
    report: ResourceReport,
) -> tuple[bool, dict[str, Any]]:
    """(ok, what the destination adds as `ir.WeightedCluster` fields) for a route
    destination: the app's Host for an `azure` upstream and, with `destinationSpec.azure`,
    the function's path and key. ok is False after reporting a problem."""
    spec = upstream.spec.azure if upstream is not None else None
    wanted = destination.azure if destination is not None else None
    where = f"{field}.destinationSpec.azure"
    if spec is None or upstream is None:
        if wanted is not None:
            report.error(where, "destinationSpec.azure needs an azure Upstream")
            return False, {}
        return True, {}
    added: dict[str, Any] = {"host_rewrite": app_host(spec)}
    if wanted is None:
        return True, added
    function = next((f for f in spec.functions if f.function_name == wanted.function_name), None)
    if function is None:
        report.error(f"{where}.functionName", f"unknown function {wanted.function_name}")
        return False, {}
    added["path_rewrite"] = f"/api/{function.function_name}"
    if function.auth_level == "Anonymous":
        return True, added
    key = _function_key(function, api_keys(upstream, refs, None) or {})
    if key is None:
        names = _key_names(function)
        report.error(
            where,
            f"secret not found for key names [{' '.join(names)}]: function "
            f"{function.function_name} has authLevel {function.auth_level}; add one of these "
            f"keys to the apiKeys of the upstream's secret (spec.azure.secretRef)",
        )
        return False, {}
    added["function_key"] = key
    return True, added


def _key_names(function: AzureFunctionSpec) -> list[str]:
    if function.auth_level == "Admin":
        return [MASTER_KEY]
    return [function.function_name, MASTER_KEY]


def _function_key(function: AzureFunctionSpec, keys: dict[str, str]) -> str | None:
    return next((keys[n] for n in _key_names(function) if keys.get(n)), None)


def check_function_route(
    clusters: Sequence[ir.WeightedCluster],
    prefix_rewrite: str | None,
    field: str,
    report: ResourceReport,
) -> bool:
    """A route (`field`) calling an Azure function has it as its one destination and
    rewrites no path itself (Envoy rewrites the path per route); False after reporting."""
    if not any(c.path_rewrite for c in clusters):
        return True
    if len(clusters) > 1:
        report.error(
            f"{field}.routeAction",
            "an azure function (destinationSpec.azure) can only be a route's one destination "
            "in gw: Envoy rewrites the path per route, not per weighted destination; give "
            "each function a route of its own",
        )
        return False
    if prefix_rewrite:
        report.error(
            f"{field}.options.prefixRewrite",
            "the azure function's path (/api/<functionName>) replaces the request's: remove "
            "prefixRewrite from this route",
        )
        return False
    return True
