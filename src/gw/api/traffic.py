"""The traffic options of virtual hosts, routes and weighted destinations, kept apart from
`virtualservice.py` so that each feature's fields sit with its model: the option classes
there extend these (`RouteOptions(RouteTrafficOptions)`, ...), and every field is spelled
and placed as in the established API.

`dlp`, `waf` and `extensions` are parsed (so that an established manifest loads) and
refused by the translator with a status naming the field: stock Envoy has neither filter,
and gw runs no plugins that read opaque extensions.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from gw.api.buffer import BufferPerRoute
from gw.api.csrf import CsrfPolicy
from gw.api.duration import Duration
from gw.api.extproc import ExtProcRouteSettings
from gw.api.faults import RouteFaults
from gw.api.headers import HeaderManipulation
from gw.api.matching import RegexMatchAndSubstitute
from gw.api.meta import Model
from gw.api.routetracing import RouteTracingSettings
from gw.api.shadowing import RouteShadowing
from gw.api.stats import Stats
from gw.api.timeouts import MaxStreamDuration
from gw.api.upgrades import ProtocolUpgradeConfig


class CorsPolicyMergeSettings(Model):
    #: UNION: a route's `exposeHeaders` are added to its virtual host's, not put instead.
    expose_headers: Literal["DEFAULT", "UNION"] = "DEFAULT"


class TrafficOptions(Model):
    """The traffic options virtual hosts and routes share."""

    buffer_per_route: BufferPerRoute | None = None
    csrf: CsrfPolicy | None = None
    ext_proc_early: ExtProcRouteSettings | None = None
    ext_proc: ExtProcRouteSettings | None = None
    ext_proc_late: ExtProcRouteSettings | None = None
    dlp: dict[str, Any] | None = None
    waf: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None


class RouteTrafficOptions(TrafficOptions):
    #: Fields of one oneof in the established API: merging options (optionsConfigRefs,
    #: delegation) takes the group whole from the source that sets any of it.
    ONEOFS: ClassVar[tuple[frozenset[str], ...]] = (
        frozenset(
            {"host_rewrite", "auto_host_rewrite", "host_rewrite_path_regex", "host_rewrite_header"}
        ),
    )

    faults: RouteFaults | None = None
    shadowing: RouteShadowing | None = None
    regex_rewrite: RegexMatchAndSubstitute | None = None
    host_rewrite_path_regex: RegexMatchAndSubstitute | None = None
    host_rewrite_header: str | None = None
    append_x_forwarded_host: bool | None = None
    idle_timeout: Duration | None = None
    max_stream_duration: MaxStreamDuration | None = None
    upgrades: list[ProtocolUpgradeConfig] | None = None
    envoy_metadata: dict[str, dict[str, Any]] | None = None
    tracing: RouteTracingSettings | None = None


class VirtualHostTrafficOptions(TrafficOptions):
    stats: Stats | None = None
    include_request_attempt_count: bool | None = None
    include_attempt_count_in_response: bool | None = None
    cors_policy_merge_settings: CorsPolicyMergeSettings | None = None


class DestinationTrafficOptions(Model):
    """The traffic options of `multi.destinations[].options`."""

    header_manipulation: HeaderManipulation | None = None
    buffer_per_route: BufferPerRoute | None = None
    csrf: CsrfPolicy | None = None
    extensions: dict[str, Any] | None = None
