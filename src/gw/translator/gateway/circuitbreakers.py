"""`circuitBreakers` (Upstream) → `ir.CircuitBreakers`: Envoy's per-cluster limits on
connections, pending requests, requests and retries. Past a limit Envoy answers 503 at
once (`x-envoy-overloaded`) instead of queueing."""

from __future__ import annotations

from gw.api.connection import CircuitBreakerConfig
from gw.translator import ir


def build_circuit_breakers(config: CircuitBreakerConfig | None) -> ir.CircuitBreakers | None:
    if config is None:
        return None
    return ir.CircuitBreakers(
        max_connections=config.max_connections,
        max_pending_requests=config.max_pending_requests,
        max_requests=config.max_requests,
        max_retries=config.max_retries,
        track_remaining=config.track_remaining,
    )
