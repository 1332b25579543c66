"""The `opaAuth` check: a Rego policy decides, evaluated in this process by rego-cpp.

The modules and the query are compiled once, when the configuration arrives (a policy the
engine refuses is a NACK: the previous configuration keeps serving); each request then
sets the input document and runs the compiled query. The input has the established
gateway's shape: `check_request` (Envoy's CheckRequest, proto field names),
`http_request` (its `attributes.request.http`) and `state` (the chain's state: `jwt` after
an OIDC step, ...). `fast_input_conversion` leaves out `check_request` and keeps only the
scalars, maps and string arrays of the other two.

The first expression of the first result decides: `true`, or an array whose first element
is `true`, allows; anything else (false, undefined, another value, an error in the
policy) refuses with `403` and an empty body. With `return_decision_reason` an allowed
request carries `{allowed, body}` (the array's second element) as dynamic metadata under
the step's name.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import regopy
from google.protobuf import json_format
from regopy.rego_shared import (
    rego_bundle_query,
    rego_free_output,
    rego_output_ok,
    rego_output_string,
)

from gw.extauth.decisions import Allow, Decision, Deny, Request, State
from gw.wire.extauth_opa import OpaAuth

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

log = logging.getLogger(__name__)

DENIED = Deny(403)
ALLOWED = Allow()
_PLAIN = (str, int, float, bool, type(None), dict)


def build(config: OpaAuth, where: str, shared: Shared) -> OpaCheck:
    return OpaCheck(config, where)


class OpaCheck:
    def __init__(self, config: OpaAuth, where: str) -> None:
        self.config = config
        self.where = where
        self.step = where.rsplit("/", 1)[-1]
        compiler = regopy.Interpreter()
        compiler.log_level = regopy.LogLevel.NONE
        try:
            for module in config.modules:
                compiler.add_module(module.name, module.source)
            self.bundle = compiler.build(config.query)
        except regopy.RegoError as exc:  # stage 1 compiles it too: only a NACK
            raise ValueError(f"opaAuth: the policy does not compile: {exc}") from None
        self.engine = regopy.Interpreter()
        self.engine.log_level = regopy.LogLevel.NONE

    def owns(self, request: Request) -> bool:
        return False

    async def check(self, request: Request, state: State) -> Decision:
        self.engine.set_input_term(json.dumps(self._input(request, state)))
        output = rego_bundle_query(self.engine._impl, self.bundle._impl)
        try:
            ok, text = rego_output_ok(output), rego_output_string(output)
        finally:
            rego_free_output(output)
        if not ok or text.startswith("(error"):
            log.warning("extauth %s: the policy failed: %s", self.where, _first_line(text))
            return DENIED
        allowed, reason = _decision(text)
        if not allowed:
            return DENIED
        if not self.config.return_decision_reason:
            return ALLOWED
        metadata = {"reason": {"allowed": True, "body": reason}}
        return Allow(metadata=((self.step, json.dumps(metadata)),))

    async def close(self) -> None:
        return None

    def _input(self, request: Request, state: State) -> dict[str, Any]:
        if self.config.fast_input_conversion:
            return {"http_request": _plain(_http(request)), "state": _plain(state)}
        check = request.check_request
        whole = (
            json_format.MessageToDict(check, preserving_proto_field_name=True)
            if check is not None
            else {}
        )
        http = whole.get("attributes", {}).get("request", {}).get("http") or _http(request)
        return {"check_request": whole, "http_request": http, "state": state}


def _http(request: Request) -> dict[str, Any]:
    """`attributes.request.http` from the fields the server reads anyway."""
    out: dict[str, Any] = {
        "method": request.method,
        "path": request.path,
        "host": request.host,
        "headers": dict(request.headers),
    }
    if request.body:
        out["body"] = request.body
    http = request.check_request.attributes.request.http if request.check_request else None
    if http is not None:
        out.update(id=http.id, scheme=http.scheme, protocol=http.protocol)
    return out


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """Only scalars, maps and string arrays (`fast_input_conversion`)."""
    return {
        k: v
        for k, v in values.items()
        if isinstance(v, _PLAIN) or (isinstance(v, list) and all(isinstance(i, str) for i in v))
    }


def _decision(text: str) -> tuple[bool, Any]:
    """Whether the query's answer allows, and the reason it gave (an array's 2nd element)."""
    if text == "undefined":
        return False, None
    try:
        results = json.loads(text)
        first = results[0] if isinstance(results, list) else results
        value = first["expressions"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return False, None
    if value is True:
        return True, None
    if isinstance(value, list) and value and value[0] is True:
        return True, value[1] if len(value) > 1 else None
    return False, None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if "errormsg" in line:
            return line.strip().removeprefix("(errormsg").strip(" )")
    return text.splitlines()[0] if text else "no answer"
