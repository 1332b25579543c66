"""`outlierDetection` (Upstream) → `ir.OutlierDetection`: passive health checking, which
ejects an endpoint from the load balancer after consecutive failures or a poor success
rate. `interval` is required, as in the established gateway (with its words)."""

from __future__ import annotations

from gw.api.duration import optional_ms
from gw.api.healthcheck import OutlierDetection
from gw.translator import ir
from gw.translator.reports import ResourceReport


def build_outlier_detection(
    config: OutlierDetection | None, field: str, report: ResourceReport
) -> ir.OutlierDetection | None:
    if config is None:
        return None
    interval = optional_ms(config.interval)
    if not interval:
        report.error(
            f"{field}.interval", "The field OutlierDetection.HealthChecker.Interval cannot be nil"
        )
        return None
    base = optional_ms(config.base_ejection_time)
    if base == 0:
        report.error(f"{field}.baseEjectionTime", "baseEjectionTime must be above 0 when set")
        return None
    return ir.OutlierDetection(
        interval_ms=interval,
        consecutive_5xx=config.consecutive_5xx,
        base_ejection_time_ms=base,
        max_ejection_percent=config.max_ejection_percent,
        enforcing_consecutive_5xx=config.enforcing_consecutive_5xx,
        enforcing_success_rate=config.enforcing_success_rate,
        success_rate_minimum_hosts=config.success_rate_minimum_hosts,
        success_rate_request_volume=config.success_rate_request_volume,
        success_rate_stdev_factor=config.success_rate_stdev_factor,
        consecutive_gateway_failure=config.consecutive_gateway_failure,
        enforcing_consecutive_gateway_failure=config.enforcing_consecutive_gateway_failure,
        split_external_local_origin_errors=config.split_external_local_origin_errors,
        consecutive_local_origin_failure=config.consecutive_local_origin_failure,
        enforcing_consecutive_local_origin_failure=(
            config.enforcing_consecutive_local_origin_failure
        ),
        enforcing_local_origin_success_rate=config.enforcing_local_origin_success_rate,
    )
