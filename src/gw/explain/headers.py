"""The filters that read or change headers: CORS (it answers a preflight itself, and adds
its headers to answers for allowed origins), the transformation stages (values read into
metadata, then request headers removed, set and appended), and the transformation templates
that run in Envoy's Lua filter. Those templates read the body and render values at run time:
explain names them and does not run them; a template that cannot render answers
`400 bad request: <why>`."""

from __future__ import annotations

from typing import Any

from envoy.extensions.filters.http.cors.v3 import cors_pb2
from envoy.extensions.filters.http.header_mutation.v3 import header_mutation_pb2
from envoy.extensions.filters.http.header_to_metadata.v3 import header_to_metadata_pb2 as h2m_pb2
from envoy.extensions.filters.http.lua.v3 import lua_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)

from gw.explain.context import Context, Result, Stop, unpack
from gw.explain.explanation import FilterStep
from gw.explain.matching import string_matches
from gw.translator.envoy.transform_lua import RULES_KEY


def cors(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    policy = unpack(found, cors_pb2.CorsPolicy())
    name = http_filter.name
    if policy is None:
        return FilterStep(name=name, kind="cors", summary="no policy on this route"), None
    if policy.HasField("filter_enabled") and policy.filter_enabled.default_value.numerator == 0:
        return FilterStep(name=name, kind="cors", summary="turned off on this route"), None
    origins = [o.exact or o.safe_regex.regex for o in policy.allow_origin_string_match]
    summary = f"CORS for origins {', '.join(origins) or '(none)'}"
    origins_sent = ctx.request.values("origin")
    origin = origins_sent[0] if origins_sent else None
    allowed = origin is not None and any(
        string_matches(m, origin) for m in policy.allow_origin_string_match
    )
    preflight = ctx.request.method == "OPTIONS" and bool(
        ctx.request.values("access-control-request-method")
    )
    if preflight and allowed:
        headers = (("access-control-allow-origin", origin or ""),)
        step = FilterStep(
            name=name, kind="cors", summary=summary, verdict="responds 200 (preflight)"
        )
        return step, Stop("cors", 200, "", headers=headers, reason="CORS preflight")
    detail = (
        f"origin {origin!r} is allowed: CORS headers go on the response"
        if allowed
        else "no allowed Origin: no CORS headers"
    )
    return FilterStep(name=name, kind="cors", summary=summary, details=(detail,)), None


def extract(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = unpack(found, h2m_pb2.Config())
    rules = list(config.request_rules) if config is not None else []
    details = tuple(
        f"reads header {r.header} into {r.on_header_present.metadata_namespace}/"
        f"{r.on_header_present.key}"
        for r in rules
    )
    summary = "extracts request values for a transformation" if rules else "nothing to read here"
    return FilterStep(
        name=http_filter.name, kind="transformation", summary=summary, details=details
    ), None


def mutate(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = unpack(found, header_mutation_pb2.HeaderMutationPerRoute())
    mutations = list(config.mutations.request_mutations) if config is not None else []
    details = []
    for m in mutations:
        if m.WhichOneof("action") == "remove":
            details.append(f"removes {m.remove}")
        elif m.WhichOneof("action") == "append":
            details.append(f"sets {m.append.header.key}: {m.append.header.value}")
    summary = "changes request headers" if mutations else "nothing to change here"
    return FilterStep(
        name=http_filter.name, kind="transformation", summary=summary, details=tuple(details)
    ), None


#: What a template that cannot render answers (gw's transformation runtime).
TEMPLATE_FAILED = "bad request: "


def lua(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = unpack(found, lua_pb2.LuaPerRoute())
    name = http_filter.name
    if config is None or config.disabled:
        return FilterStep(name=name, kind="transformation", summary="no template here"), None
    rules = config.filter_context.fields.get(RULES_KEY)
    if rules is not None:  # run by the listener's shared script
        what = f"Lua rules of {len(rules.string_value)} bytes"
    else:  # a whole script (the routes of TLS virtual hosts)
        what = f"a Lua script of {len(config.source_code.inline_string)} bytes"
    summary = f"runs this route's transformation templates ({what})"
    detail = (
        "explain does not run templates: one that cannot render (a missing variable, a body "
        f"that is not JSON) answers 400 {TEMPLATE_FAILED}<why>"
    )
    step = FilterStep(
        name=name,
        kind="transformation",
        summary=summary,
        details=(detail,),
        verdict="passes unless a template cannot render",
    )
    return step, None
