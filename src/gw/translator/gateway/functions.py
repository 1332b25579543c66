"""Service specs (`serviceSpec` of static, orch and pipe upstreams): what the established
gateway's function discovery fills in. gw does no function discovery: a spec is accepted
and reported as such (a warning on the Upstream), and a gRPC one makes the upstream
HTTP/2, which gRPC needs whatever its functions are."""

from __future__ import annotations

from gw.api import Upstream
from gw.api.functions import ServiceSpec
from gw.translator.reports import ResourceReport


def service_spec_wants_http2(upstream: Upstream, report: ResourceReport) -> bool:
    """A gRPC service spec makes the upstream HTTP/2; none of them is used further (gw does
    no function discovery), which the status says."""
    spec = upstream.spec
    for field, service in (
        ("spec.static.serviceSpec", spec.static.service_spec if spec.static else None),
        ("spec.orch.serviceSpec", spec.orch.service_spec if spec.orch else None),
        ("spec.pipe.serviceSpec", spec.pipe.service_spec if spec.pipe else None),
    ):
        if service is not None:
            return _report_service_spec(service, field, report)
    return False


def _report_service_spec(service: ServiceSpec, field: str, report: ResourceReport) -> bool:
    if service.rest is not None:
        report.warning(
            f"{field}.rest",
            "accepted and reported without function discovery: gw does not read REST function "
            "descriptions (transformations, swaggerInfo), which have no effect; routes reach "
            "the upstream as plain HTTP",
        )
        return False
    kind = "grpc" if service.grpc is not None else "grpcJsonTranscoder"
    if service.grpc is None and service.grpc_json_transcoder is None:
        report.error(field, "a service spec needs one of rest, grpc and grpcJsonTranscoder")
        return False
    report.warning(
        f"{field}.{kind}",
        "accepted and reported without function discovery: the upstream is spoken to over "
        "HTTP/2 for gRPC; its descriptors have no effect (gw neither discovers gRPC functions "
        "nor transcodes JSON to gRPC)",
    )
    return True
