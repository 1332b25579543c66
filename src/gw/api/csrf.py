"""`csrf` (virtual host, route, weighted destination): Envoy's CSRF filter, which compares a
mutating request's `Origin` with its destination."""

from __future__ import annotations

from gw.api.matching import RuntimeFractionalPercent, StringMatcher
from gw.api.meta import Model


class CsrfPolicy(Model):
    #: Share of requests the policy is enforced on (403 on a bad origin); unset: none.
    filter_enabled: RuntimeFractionalPercent | None = None
    #: Share of requests checked and counted in the stats, never refused.
    shadow_enabled: RuntimeFractionalPercent | None = None
    #: Origins allowed besides the destination's own.
    additional_origins: list[StringMatcher] = []
