"""Azure function calls → a route's path rewrite and the function key header.

The function's path (`/api/<name>`) replaces the request's whole path and keeps its query
string: a regex rewrite of the path (Envoy matches it without the query and puts the query
back). The key goes in `x-functions-key`, replacing any the client sent. Envoy rewrites
paths per route, so stage 1 only lets a function be a route's one destination.
"""

from __future__ import annotations

from envoy.config.core.v3 import base_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.matcher.v3 import regex_pb2

from gw.translator import ir

FUNCTION_KEY_HEADER = "x-functions-key"
#: Request headers gw adds whose values are secrets: views of the config show their names only.
SECRET_HEADERS = frozenset({FUNCTION_KEY_HEADER})


def add_function_call(out: rc_pb2.Route, action: ir.Forward) -> None:
    """The path and key of the Azure function the route calls, if it calls one."""
    if len(action.clusters) == 1:
        target = action.clusters[0]
        if target.path_rewrite is not None:
            out.route.regex_rewrite.CopyFrom(
                regex_pb2.RegexMatchAndSubstitute(
                    pattern=regex_pb2.RegexMatcher(regex="^.*$"),
                    substitution=target.path_rewrite,
                )
            )
        if target.function_key is not None:
            out.request_headers_to_add.append(_key_header(target.function_key))
        return
    for weight, target in zip(out.route.weighted_clusters.clusters, action.clusters, strict=True):
        if target.function_key is not None:
            weight.request_headers_to_add.append(_key_header(target.function_key))


def _key_header(key: str) -> base_pb2.HeaderValueOption:
    return base_pb2.HeaderValueOption(
        header=base_pb2.HeaderValue(key=FUNCTION_KEY_HEADER, value=key),
        append_action=base_pb2.HeaderValueOption.OVERWRITE_IF_EXISTS_OR_ADD,
    )
