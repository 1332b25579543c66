"""The parts of a retry policy beyond Envoy's plain fields: the back-off read from
rate-limited answers' headers, and the previous-priorities retry priority."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.retry.priority.previous_priorities.v3 import (
    previous_priorities_config_pb2 as priorities_pb2,
)

from gw.translator import ir
from gw.translator.envoy.matching import milliseconds
from gw.translator.envoy.packing import pack

PREVIOUS_PRIORITIES = "envoy.retry_priorities.previous_priorities"
_FORMATS = {
    "SECONDS": rc_pb2.RetryPolicy.SECONDS,
    "UNIX_TIMESTAMP": rc_pb2.RetryPolicy.UNIX_TIMESTAMP,
}


def add_retry_extras(out: rc_pb2.RetryPolicy, policy: ir.RetryPolicy) -> None:
    if policy.reset_headers:
        back_off = out.rate_limited_retry_back_off
        back_off.reset_headers.extend(
            rc_pb2.RetryPolicy.ResetHeader(name=name, format=_FORMATS[fmt])
            for name, fmt in policy.reset_headers
        )
        if policy.rate_limited_max_interval_ms is not None:
            back_off.max_interval.CopyFrom(milliseconds(policy.rate_limited_max_interval_ms))
    if policy.previous_priorities_update_frequency is not None:
        config = priorities_pb2.PreviousPrioritiesConfig(
            update_frequency=policy.previous_priorities_update_frequency
        )
        out.retry_priority.CopyFrom(
            rc_pb2.RetryPolicy.RetryPriority(name=PREVIOUS_PRIORITIES, typed_config=pack(config))
        )
