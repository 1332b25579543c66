"""Settings of a listener's route configuration (a Gateway's `routeOptions`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteConfigOptions:
    #: The largest direct response body Envoy accepts (None: Envoy's 4096 bytes).
    max_direct_response_body_bytes: int | None = None
    #: True: route header changes are applied after (so over) the virtual host's.
    most_specific_header_mutations_wins: bool = False
