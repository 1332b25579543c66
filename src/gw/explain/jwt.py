"""What Envoy's `jwt_authn` filter does with a request: which requirement applies (the
route's or virtual host's `PerRouteConfig`), where each provider looks for a token, and what
it finds.

A token is checked in Envoy's order: its form (three dot-separated parts of base64 JSON),
the issuer, the time (`exp`, `nbf`, with the provider's clock skew), the audiences, then the
signature, against the provider's local key set. A remote key set is fetched by Envoy at
run time: explain cannot check the signature and says so (a token that passes everything
else is taken as valid). Failures answer as Envoy does: 401 with `Jwt is missing`, `Jwt is
expired`, ... and 403 `Audiences in Jwt are not allowed`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from envoy.extensions.filters.http.jwt_authn.v3 import config_pb2 as jwt_pb2

from gw.explain.paths import query_params
from gw.explain.request import Request

MISSING = "Jwt is missing"
_FORM = "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections"


@dataclass(frozen=True, slots=True)
class Denial:
    status: int
    body: str


@dataclass(frozen=True, slots=True, kw_only=True)
class JwtResult:
    #: What this filter requires of the request.
    summary: str
    details: tuple[str, ...] = ()
    denial: Denial | None = None
    #: Verified payloads by metadata key (`payload_in_metadata`): what RBAC reads.
    payloads: Mapping[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Outcome:
    ok: bool
    denial: Denial | None
    notes: tuple[str, ...]
    payloads: dict[str, dict[str, Any]]


def evaluate(
    config: jwt_pb2.JwtAuthentication,
    per_route: jwt_pb2.PerRouteConfig | None,
    request: Request,
    query: str,
    now: float,
) -> JwtResult:
    if per_route is None:
        return JwtResult(summary="no requirement on this route: the request passes untouched")
    if per_route.disabled:
        return JwtResult(summary="turned off on this route (jwt.disable): no token is checked")
    name = per_route.requirement_name
    requirement = config.requirement_map.get(name)
    if requirement is None:
        return JwtResult(summary=f"requirement {name} is not configured: the request passes")
    checker = _Checker(config, request, query, now)
    outcome = checker.requirement(requirement)
    summary = f"requires {describe(requirement)} (requirement {name})"
    return JwtResult(
        summary=summary,
        details=outcome.notes,
        denial=None if outcome.ok else outcome.denial,
        payloads=outcome.payloads if outcome.ok else {},
    )


def describe(requirement: jwt_pb2.JwtRequirement) -> str:
    kind = requirement.WhichOneof("requires_type")
    if kind == "provider_name":
        return f"a valid JWT from provider {requirement.provider_name}"
    if kind == "requires_any":
        return "any of: " + "; ".join(describe(r) for r in requirement.requires_any.requirements)
    if kind == "requires_all":
        return "all of: " + "; ".join(describe(r) for r in requirement.requires_all.requirements)
    if kind == "allow_missing":
        return "no token, or a valid one"
    if kind == "allow_missing_or_failed":
        return "nothing (a token is verified if it can be)"
    if kind == "provider_and_audiences":
        p = requirement.provider_and_audiences
        return f"a valid JWT from provider {p.provider_name} for {', '.join(p.audiences)}"
    return str(kind)


class _Checker:
    def __init__(
        self, config: jwt_pb2.JwtAuthentication, request: Request, query: str, now: float
    ) -> None:
        self.config = config
        self.request = request
        self.params = query_params(query)
        self.now = now
        self.tokens_seen = False

    def requirement(self, requirement: jwt_pb2.JwtRequirement) -> _Outcome:
        kind = requirement.WhichOneof("requires_type")
        if kind == "provider_name":
            return self.provider(requirement.provider_name, ())
        if kind == "provider_and_audiences":
            p = requirement.provider_and_audiences
            return self.provider(p.provider_name, tuple(p.audiences))
        if kind == "allow_missing":
            ok = not self.tokens_seen
            return _Outcome(ok, None, ("no token: allowed",) if ok else (), {})
        if kind == "allow_missing_or_failed":
            return _Outcome(True, None, ("a missing or failed token is allowed",), {})
        if kind in ("requires_any", "requires_all"):
            return self._combined(kind, requirement)
        return _Outcome(True, None, (), {})

    def _combined(self, kind: str, requirement: jwt_pb2.JwtRequirement) -> _Outcome:
        parts = getattr(requirement, kind).requirements
        results = [self.requirement(r) for r in parts]
        notes = tuple(n for r in results for n in r.notes)
        payloads = {k: v for r in results if r.ok for k, v in r.payloads.items()}
        if kind == "requires_any":
            ok = any(r.ok for r in results)
            failed = [r.denial for r in results if r.denial is not None]
            # Envoy reports the failure of the last alternative tried.
            return _Outcome(ok, failed[-1] if failed else None, notes, payloads)
        failure = next((r for r in results if not r.ok), None)
        return _Outcome(failure is None, failure.denial if failure else None, notes, payloads)

    def provider(self, name: str, audiences: tuple[str, ...]) -> _Outcome:
        provider = self.config.providers.get(name)
        if provider is None:
            return _Outcome(False, Denial(401, MISSING), (f"provider {name} is not served",), {})
        token, where = self._token(provider)
        if token is None:
            places = ", ".join(_locations(provider))
            note = f"provider {name}: no token in {places}"
            return _Outcome(False, Denial(401, MISSING), (note,), {})
        self.tokens_seen = True
        problem, payload, note = self._verify(provider, token, audiences)
        prefix = f"provider {name}: token from {where}: "
        if problem is not None:
            return _Outcome(False, problem, (prefix + problem.body,), {})
        key = provider.payload_in_metadata or name
        return _Outcome(True, None, (prefix + note,), {key: payload})

    def _token(self, provider: jwt_pb2.JwtProvider) -> tuple[str | None, str]:
        headers = list(provider.from_headers)
        params = list(provider.from_params)
        cookies = list(provider.from_cookies)
        if not headers and not params and not cookies:
            headers = [jwt_pb2.JwtHeader(name="Authorization", value_prefix="Bearer ")]
            params = ["access_token"]
        for header in headers:
            for value in self.request.values(header.name):
                prefix = header.value_prefix
                if not prefix:
                    return value, f"header {header.name}"
                at = value.find(prefix)
                if at >= 0:
                    return value[at + len(prefix) :].split(",")[0].strip(), f"header {header.name}"
        for param in params:
            for pname, value in self.params:
                if pname == param:
                    return unquote(value), f"query parameter {param}"
        for cookie in cookies:
            for text in self.request.values("cookie"):
                for part in text.split(";"):
                    cname, _, value = part.strip().partition("=")
                    if cname == cookie:
                        return value, f"cookie {cookie}"
        return None, ""

    def _verify(
        self, provider: jwt_pb2.JwtProvider, token: str, audiences: tuple[str, ...]
    ) -> tuple[Denial | None, dict[str, Any], str]:
        parts = token.split(".")
        if len(parts) != 3:
            return Denial(401, _FORM), {}, ""
        header = _json_part(parts[0])
        if header is None:
            return Denial(401, "Jwt header is an invalid JSON"), {}, ""
        payload = _json_part(parts[1])
        if payload is None:
            return Denial(401, "Jwt payload is an invalid JSON"), {}, ""
        if provider.issuer and payload.get("iss") != provider.issuer:
            return Denial(401, "Jwt issuer is not configured"), payload, ""
        skew = provider.clock_skew_seconds or 60
        exp, nbf = payload.get("exp"), payload.get("nbf")
        if isinstance(exp, int | float) and exp + skew < self.now:
            return Denial(401, "Jwt is expired"), payload, ""
        if isinstance(nbf, int | float) and nbf - skew > self.now:
            return Denial(401, "Jwt not yet valid"), payload, ""
        allowed = set(audiences or provider.audiences)
        claimed = payload.get("aud")
        claimed_set = set(claimed) if isinstance(claimed, list) else {claimed} if claimed else set()
        if allowed and not allowed & claimed_set:
            return Denial(403, "Audiences in Jwt are not allowed"), payload, ""
        if provider.HasField("local_jwks"):
            problem = _signature(provider.local_jwks.inline_string, token)
            if problem is not None:
                return Denial(401, problem), payload, ""
            return None, payload, "verified (signature checked against the local key set)"
        url = provider.remote_jwks.http_uri.uri if provider.HasField("remote_jwks") else "?"
        return (
            None,
            payload,
            (
                f"issuer, time and audience pass; the signature is checked by Envoy against the "
                f"key set at {url}, which explain does not fetch"
            ),
        )


def _locations(provider: jwt_pb2.JwtProvider) -> list[str]:
    places = [
        f"header {h.name}" + (f" ({h.value_prefix.strip()} ...)" if h.value_prefix else "")
        for h in provider.from_headers
    ]
    places += [f"query parameter {p}" for p in provider.from_params]
    places += [f"cookie {c}" for c in provider.from_cookies]
    return places or ["header Authorization (Bearer ...)", "query parameter access_token"]


def _json_part(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _signature(jwks: str, token: str) -> str | None:
    """None when a key of the set verifies the token; else Envoy's message."""
    from joserfc import jws
    from joserfc.errors import BadSignatureError, JoseError
    from joserfc.jwk import KeySet

    try:
        keys = KeySet.import_key_set(json.loads(jwks))
    except (JoseError, ValueError, TypeError):
        return "Jwks is invalid"
    try:
        jws.deserialize_compact(token, keys)
    except BadSignatureError:
        return "Jwt verification fails"
    except JoseError:
        return "Jwks doesn't have key to match kid or alg from Jwt"
    return None
