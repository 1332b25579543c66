"""`ir.BasicLimits` → the descriptor actions Envoy sends for `ratelimitBasic` (its server
config is `gateway/ratelimit_basic.py`).

Where extauth runs on a route, its server removes a client's copy of the user id header and
sets it for a user it identified: a request with the header is counted per user, one without
per client address. Where extauth does not run, nothing vouches for that header, so every
request is counted per address (a client cannot pick a user id to escape its limit).
"""

from __future__ import annotations

from gw.translator import ir
from gw.wire.ratelimit import (
    BASIC_ANONYMOUS_KEY,
    BASIC_SCOPE_KEY,
    BASIC_USER_KEY,
    CONFIG_KEY,
    basic_config_id,
)

#: The value of the anonymous marker entry (the server's tree has the same).
ANONYMOUS = "true"


def extauth_runs(vhost: ir.VirtualHost, route: ir.Route | None) -> bool:
    """Whether the extauth server checks requests of `route` (None: of the host)."""
    own = route.extauth if route is not None else None
    extauth = own if own is not None else vhost.extauth
    return extauth is not None and extauth.config_id is not None


def basic_policies(
    vhost: ir.VirtualHost, basic: ir.BasicLimits, route: ir.Route | None
) -> tuple[ir.Policy, ...]:
    source = vhost.source
    head = (
        ir.Action(
            kind="generic_key",
            descriptor_key=CONFIG_KEY,
            descriptor_value=basic_config_id(source.namespace, source.name),
        ),
        ir.Action(kind="generic_key", descriptor_key=BASIC_SCOPE_KEY, descriptor_value=basic.scope),
    )
    identified = extauth_runs(vhost, route)
    header = vhost.ratelimit_server.user_id_header if vhost.ratelimit_server else "x-user-id"
    out = []
    if basic.authorized is not None and identified:
        user = ir.Action(kind="request_headers", header_name=header, descriptor_key=BASIC_USER_KEY)
        out.append(ir.Policy(actions=(*head, user)))
    if basic.anonymous is not None:
        anonymous = ir.Action(
            kind="generic_key", descriptor_key=BASIC_ANONYMOUS_KEY, descriptor_value=ANONYMOUS
        )
        if identified:
            anonymous = ir.Action(
                kind="header_value_match",
                descriptor_key=BASIC_ANONYMOUS_KEY,
                descriptor_value=ANONYMOUS,
                expect_match=False,
                headers=(ir.HeaderCondition(name=header, kind="present"),),
            )
        address = ir.Action(kind="remote_address")
        out.append(ir.Policy(actions=(*head, anonymous, address)))
    return tuple(out)


def basic_differs(vhost: ir.VirtualHost, route: ir.Route) -> bool:
    """Whether the host's basic limits need other actions on `route` (extauth differs)."""
    host = vhost.ratelimit.basic if vhost.ratelimit is not None else None
    own = route.ratelimit.basic if route.ratelimit is not None else None
    return (
        host is not None and own is None and extauth_runs(vhost, route) != extauth_runs(vhost, None)
    )
