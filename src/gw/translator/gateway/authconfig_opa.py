"""`opaAuth` → `gw.wire.extauth_opa.OpaAuth`: the ConfigMaps' modules are read here.

Every `modules[]` ref names a ConfigMap; each of its `data` entries is one Rego module
(named `<namespace>.<name>/<key>` in the engine's messages). The policy is compiled with
its query here, as the extauth server will compile it (`rego.py`): a syntax error, an
undefined reference or a function the engine lacks rejects the AuthConfig with the module,
line and column. The AuthConfig is linked to each ConfigMap, so an edited policy reaches
the server with the next translation.
"""

from __future__ import annotations

from gw import api
from gw.api.authconfig_opa import OpaAuth
from gw.translator.gateway import rego
from gw.translator.gateway.authstep import Needs, StepContext
from gw.wire import extauth_opa
from gw.wire.extauth_jwt import METADATA_NAMESPACE as JWT_NAMESPACE


def needs(opa: OpaAuth) -> Needs:
    """A policy may read any header, and the JWT filter's payloads in `check_request`."""
    return Needs(headers=None, metadata=(JWT_NAMESPACE,))


def build(opa: OpaAuth, ctx: StepContext) -> extauth_opa.OpaAuth | None:
    if not opa.query.strip():
        ctx.error("query", "required: the query that decides, e.g. data.test.allow == true")
        return None
    modules: list[extauth_opa.Module] = []
    for i, ref in enumerate(opa.modules):
        field = f"modules[{i}]"
        config_map = ctx.refs.resolve(
            api.ConfigMap, ref, referrer=ctx.key, field=f"{ctx.field}.{field}"
        )
        key = ctx.refs.key(api.ConfigMap, ref, ctx.key)
        where = f"{key.namespace}.{key.name}"
        if config_map is None:
            ctx.error(
                field,
                f"ConfigMap {where} not found: create it with the policy "
                f"(`kubectl create configmap {key.name} --namespace {key.namespace} "
                "--from-file=policy.rego`, or a ConfigMap manifest in the folder)",
            )
            continue
        if not config_map.data:
            ctx.error(field, f"ConfigMap {where} holds no data: put the Rego module in data")
            continue
        modules.extend(
            extauth_opa.Module(name=f"{where}/{name}", source=source)
            for name, source in sorted(config_map.data.items())
        )
    if ctx.report.errors:
        return None
    found = rego.problems(tuple((m.name, m.source) for m in modules), opa.query)
    for problem in found:
        ctx.error("query" if problem.startswith("the query") else "modules", problem)
    if found:
        return None
    options = opa.options
    return extauth_opa.OpaAuth(
        modules=tuple(modules),
        query=opa.query,
        fast_input_conversion=bool(options and options.fast_input_conversion),
        return_decision_reason=bool(options and options.return_decision_reason),
    )
