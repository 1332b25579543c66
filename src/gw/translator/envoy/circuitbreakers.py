"""IR circuit breakers → the default-priority thresholds of an Envoy cluster."""

from __future__ import annotations

from envoy.config.cluster.v3 import circuit_breaker_pb2, cluster_pb2

from gw.translator import ir


def add_circuit_breakers(out: cluster_pb2.Cluster, breakers: ir.CircuitBreakers | None) -> None:
    if breakers is None:
        return
    thresholds = circuit_breaker_pb2.CircuitBreakers.Thresholds(
        track_remaining=breakers.track_remaining
    )
    if breakers.max_connections is not None:
        thresholds.max_connections.value = breakers.max_connections
    if breakers.max_pending_requests is not None:
        thresholds.max_pending_requests.value = breakers.max_pending_requests
    if breakers.max_requests is not None:
        thresholds.max_requests.value = breakers.max_requests
    if breakers.max_retries is not None:
        thresholds.max_retries.value = breakers.max_retries
    out.circuit_breakers.thresholds.append(thresholds)
