"""The validation webhook's verdicts: the candidate goes through the control plane's own
parse and translation against its current snapshot."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gw.api import ResourceKey, parse_document
from gw.controlplane import ControlPlane
from gw.orch.admission import Validator, refusal, review_response
from gw.snapshot import Snapshot
from gw.store.status import StatusBook
from gw.xds.cache import SnapshotCache


class _Store:
    def __init__(self) -> None:
        self.statuses = StatusBook()

    async def watch(self) -> AsyncIterator[Snapshot]:  # never used: apply() is called directly
        yield Snapshot()


def vs(name: str, domain: str, upstream: str = "echo", **route: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "virtualHost": {
                "domains": [domain],
                "routes": [
                    {
                        "matchers": [{"prefix": "/"}],
                        "routeAction": {
                            "single": {"upstream": {"name": upstream, "namespace": "gw-system"}}
                        },
                        **route,
                    }
                ],
            }
        },
    }


UPSTREAM = {
    "apiVersion": "gw.vendor.io/v1",
    "kind": "Upstream",
    "metadata": {"name": "echo", "namespace": "gw-system"},
    "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": 9000}]}},
}


@pytest.fixture
async def plane() -> ControlPlane:
    plane = ControlPlane(_Store(), SnapshotCache())
    resources = [parse_document(UPSTREAM), parse_document(vs("web", "web.example.com"))]
    await plane.apply(Snapshot(resources={r.key: r for r in resources}))
    return plane


async def test_a_valid_resource_is_allowed(plane: ControlPlane) -> None:
    verdict = Validator(plane).judge("CREATE", vs("other", "other.example.com"))
    assert verdict.allowed and verdict.warnings == ()


async def test_a_warning_is_allowed_with_its_text_unless_warnings_are_refused(
    plane: ControlPlane,
) -> None:
    missing = vs("other", "other.example.com", upstream="nowhere")
    allowed = Validator(plane).judge("CREATE", missing)
    assert allowed.allowed
    assert len(allowed.warnings) == 1 and "nowhere" in allowed.warnings[0]
    strict = Validator(plane, allow_warnings=False).judge("CREATE", missing)
    assert not strict.allowed
    assert 'name:"other"  namespace:"default": ' + allowed.warnings[0] in strict.message


async def test_a_resource_that_would_be_rejected_is_refused_with_the_reasons(
    plane: ControlPlane,
) -> None:
    verdict = Validator(plane).judge("UPDATE", vs("other", "web.example.com"))
    assert not verdict.allowed
    assert verdict.message.startswith(
        "resource incompatible with current gw snapshot: [Validating *v1.VirtualService failed: "
        "2 errors occurred:\n\t* Validating *v1.VirtualService failed: validating "
        '*v1.VirtualService name:"other"  namespace:"default": '
    )
    # the live one would be rejected too: named as well
    assert 'name:"web"  namespace:"default": ' in verdict.message


async def test_a_manifest_that_does_not_parse_is_refused(plane: ControlPlane) -> None:
    broken = vs("web", "web.example.com", options={"timeout": "soon"})
    verdict = Validator(plane).judge("CREATE", broken)
    assert not verdict.allowed
    assert verdict.message.startswith(
        "could not unmarshal raw object: parsing resource from crd spec web in namespace "
        "default into *v1.VirtualService: spec.virtualHost.routes[0].options.timeout: "
    )


async def test_deletions_and_other_kinds_are_allowed(plane: ControlPlane) -> None:
    validator = Validator(plane)
    assert validator.judge("DELETE", UPSTREAM).allowed
    assert validator.judge("CREATE", {"apiVersion": "v1", "kind": "Service"}).allowed
    assert validator.judge("CREATE", {"apiVersion": "v1", "kind": "ConfigMap"}).allowed


def test_refusal_text_matches_the_established_shape() -> None:
    key = ResourceKey("VirtualService", "gw-system", "reject-me")
    finding = "Route Warning: InvalidDestinationWarning. Reason: *v1.Upstream { x } not found"
    assert refusal([(key, finding)]) == (
        "resource incompatible with current gw snapshot: [Validating *v1.VirtualService failed: "
        "1 error occurred:\n\t* Validating *v1.VirtualService failed: validating "
        '*v1.VirtualService name:"reject-me"  namespace:"gw-system": ' + finding + "\n\n]"
    )


def test_review_response_echoes_the_uid() -> None:
    from gw.orch.admission import Verdict

    review = {"apiVersion": "admission.k8s.io/v1", "request": {"uid": "1234"}}
    assert review_response(review, Verdict(True)) == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "1234", "allowed": True},
    }
    refused = review_response(review, Verdict(False, "no"))["response"]
    assert refused["status"] == {"code": 400, "message": "no", "reason": "BadRequest"}
