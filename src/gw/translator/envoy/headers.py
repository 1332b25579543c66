"""`headerManipulation` → the header fields of Envoy's virtual hosts and routes.

Envoy applies them when the router sends the request upstream, after every HTTP filter:
JWT verification still sees a header that is removed here. Both levels apply, the route's
first and then the virtual host's, each removing before adding (Envoy's order, and the
established gateway's).
"""

from __future__ import annotations

from envoy.config.core.v3 import base_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.translator import ir


def add_header_manipulation(
    target: rc_pb2.VirtualHost | rc_pb2.Route, headers: ir.HeaderManipulation | None
) -> None:
    if headers is None:
        return
    target.request_headers_to_add.extend(header_option(h) for h in headers.request_headers_to_add)
    target.request_headers_to_remove.extend(headers.request_headers_to_remove)
    target.response_headers_to_add.extend(header_option(h) for h in headers.response_headers_to_add)
    target.response_headers_to_remove.extend(headers.response_headers_to_remove)


def header_option(header: ir.HeaderValue) -> base_pb2.HeaderValueOption:
    action = (
        base_pb2.HeaderValueOption.APPEND_IF_EXISTS_OR_ADD
        if header.append
        else base_pb2.HeaderValueOption.OVERWRITE_IF_EXISTS_OR_ADD
    )
    return base_pb2.HeaderValueOption(
        header=base_pb2.HeaderValue(key=header.name, value=header.value),
        append_action=action,
        # A value from a secret is never empty (stage 1 leaves empty ones out), so this
        # changes nothing Envoy does; it marks the value for every view of the configuration
        # (ours and Envoy's own dump) to redact (`dump.redact`).
        keep_empty_value=header.secret is not None,
    )
