"""The validation webhook: the orchestrator asks before it stores a gw resource, and a
resource that would be `Rejected` is refused with the reasons, so a typo never takes live
routes away (REFERENCE.md §2.4).

`POST /validation` takes an `AdmissionReview` (`admission.k8s.io/v1`). The candidate goes
through the same parse and translation as the control plane's snapshot, with the candidate in
place of the stored version. It is refused when

- it does not parse (`could not unmarshal raw object: ...`), or
- it would be `Rejected`, or would make another resource `Rejected` that is not now (a
  duplicate domain rejects both virtual services), or
- it would be `Warning` and `allow_warnings` is off.

Warnings that are allowed come back as admission warnings (`kubectl` prints them). Deletions
are allowed: removing a resource leaves its referrers with warnings, not errors. The text of
a refusal follows the established gateway's, which the API server prefixes with
`admission webhook "<name>" denied the request: `.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gw.api import STATUSLESS_KINDS, ManifestError, ResourceKey, kind_for, parse_document
from gw.api.status import State
from gw.controlplane import ControlPlane
from gw.snapshot import Snapshot
from gw.translator.translation import translate

log = logging.getLogger(__name__)

PRODUCT = "gw"
PATH = "/validation"


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    message: str = ""
    warnings: tuple[str, ...] = ()


class Validator:
    def __init__(self, controlplane: ControlPlane, *, allow_warnings: bool = True) -> None:
        self.controlplane = controlplane
        self.allow_warnings = allow_warnings

    def judge(self, operation: str, obj: Any) -> Verdict:
        """The verdict on one candidate object (the `object` of an admission request)."""
        if operation == "DELETE" or not isinstance(obj, dict):
            return Verdict(True)
        kind = kind_for(str(obj.get("kind")))
        if kind is None or kind.KIND in STATUSLESS_KINDS:
            return Verdict(True)
        candidate = dict(obj)
        candidate.pop("status", None)
        try:
            resource = parse_document(candidate)
        except ManifestError as exc:
            meta = obj.get("metadata") or {}
            return Verdict(
                False,
                f"could not unmarshal raw object: parsing resource from crd spec "
                f"{meta.get('name')} in namespace {meta.get('namespace')} into "
                f"*v1.{kind.KIND}: {exc.details()}",
            )
        return self._translate(resource.key, _with(self._current(), resource))

    def _current(self) -> Snapshot:
        return self.controlplane.snapshot or Snapshot()

    def _translate(self, key: ResourceKey, snapshot: Snapshot) -> Verdict:
        plane = self.controlplane
        previous = plane.result.accepted if plane.result else None
        before = plane.result.statuses if plane.result else {}
        result = translate(snapshot, plane.options, previous)
        report = result.reports.of(key)
        problems = [(key, str(e)) for e in report.errors]
        if not self.allow_warnings:
            problems += [(key, str(w)) for w in report.warnings]
        for other, status in sorted(result.statuses.items()):
            was = before.get(other)
            if other != key and status.state is State.REJECTED:
                if was is not None and was.state is not State.REJECTED:
                    problems += [(other, str(e)) for e in result.reports.of(other).errors]
        if problems:
            return Verdict(False, refusal(problems))
        return Verdict(True, warnings=tuple(str(w) for w in report.warnings))


def refusal(problems: list[tuple[ResourceKey, str]]) -> str:
    """`resource incompatible with current gw snapshot: [Validating *v1.Kind failed: N errors
    occurred:\\n\\t* Validating *v1.Kind failed: validating *v1.Kind name:"n"  namespace:"ns":
    <finding>\\n\\n]`, one line per finding."""
    kind = problems[0][0].kind
    count = len(problems)
    lines = "".join(
        f'\t* Validating *v1.{k.kind} failed: validating *v1.{k.kind} name:"{k.name}"  '
        f'namespace:"{k.namespace}": {finding}\n'
        for k, finding in problems
    )
    noun = "error" if count == 1 else "errors"
    return (
        f"resource incompatible with current {PRODUCT} snapshot: [Validating *v1.{kind} "
        f"failed: {count} {noun} occurred:\n{lines}\n]"
    )


def _with(snapshot: Snapshot, resource: Any) -> Snapshot:
    """`snapshot` with `resource` in place of what it holds under that key."""
    resources = dict(snapshot.resources)
    resources[resource.key] = resource
    errors = tuple(e for e in snapshot.errors if e.key != resource.key)
    return Snapshot(resources=resources, sources=snapshot.sources, errors=errors)


def review_response(review: Any, verdict: Verdict) -> dict[str, Any]:
    request = review.get("request") or {}
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": verdict.allowed}
    if not verdict.allowed:
        response["status"] = {"code": 400, "message": verdict.message, "reason": "BadRequest"}
    if verdict.warnings:
        response["warnings"] = list(verdict.warnings)
    return {
        "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
        "kind": "AdmissionReview",
        "response": response,
    }


def build_app(validator: Validator) -> Starlette:
    async def validation(request: Request) -> JSONResponse:
        try:
            review = await request.json()
            admission = review["request"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "expected an AdmissionReview with a request"}, 400)
        verdict = await asyncio.to_thread(
            validator.judge, str(admission.get("operation", "")), admission.get("object")
        )
        meta = (admission.get("object") or {}).get("metadata") or {}
        log.info(
            "admission: %s %s %s/%s: %s",
            admission.get("operation"),
            (admission.get("kind") or {}).get("kind"),
            meta.get("namespace"),
            meta.get("name"),
            "allowed" if verdict.allowed else "refused",
        )
        return JSONResponse(review_response(review, verdict))

    async def healthz(_: Request) -> JSONResponse:
        """Ready once the control plane has translated the cluster's resources once."""
        ready = validator.controlplane.ready.is_set()
        return JSONResponse({"ready": ready}, 200 if ready else 503)

    return Starlette(routes=[Route(PATH, validation, methods=["POST"]), Route("/healthz", healthz)])
