"""A Gateway's `routeOptions` → `ir.RouteConfigOptions`, for the route configurations of
its listener: `mostSpecificHeaderMutationsWins` (a route's header changes win over its
virtual host's) and `maxDirectResponseBodySizeBytes`."""

from __future__ import annotations

from gw.api.gateway import RouteConfigurationOptions
from gw.translator import ir

#: What is compared with to tell that nothing is set (made once, not per call).
_NO_OPTIONS = ir.RouteConfigOptions()


def build_route_config_options(
    options: RouteConfigurationOptions | None,
) -> ir.RouteConfigOptions | None:
    if options is None:
        return None
    built = ir.RouteConfigOptions(
        max_direct_response_body_bytes=options.max_direct_response_body_size_bytes,
        most_specific_header_mutations_wins=bool(options.most_specific_header_mutations_wins),
    )
    return None if built == _NO_OPTIONS else built
