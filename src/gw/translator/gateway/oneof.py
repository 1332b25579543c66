"""Option fields that are one choice in the established API (a protobuf `oneof`): when a
delegated route's own options set one of them, its parent's choice among them is dropped,
as a `oneof` field is replaced whole; two of them set by the same resource stay an error
(reported by the option's builder).
"""

from __future__ import annotations

from gw.api.virtualservice import RouteOptions

#: Each group: the model attributes of one `oneof` of route options.
ROUTE_ONEOFS: tuple[tuple[str, ...], ...] = (
    ("jwt", "jwt_staged", "jwt_providers_staged"),
    ("ratelimit", "rate_limit_configs"),
    ("ratelimit_early", "rate_limit_early_configs"),
    ("ratelimit_regular", "rate_limit_regular_configs"),
)


def own_choices(own: RouteOptions | None, merged: RouteOptions) -> RouteOptions:
    """`merged` (a route's options over its parent's) without the parent's choice in each
    group where the route's own options made one."""
    if own is None:
        return merged
    dropped = {
        name: None
        for group in ROUTE_ONEOFS
        if any(getattr(own, name) is not None for name in group)
        for name in group
        if getattr(own, name) is None and getattr(merged, name) is not None
    }
    return merged.model_copy(update=dropped) if dropped else merged
