"""`headerManipulation` (virtual host or route) → `ir.HeaderManipulation`.

Every header name and value is checked here, so that a bad one is a status on the
VirtualService and never a route configuration Envoy refuses: names must be HTTP tokens,
pseudo-headers (`:path`) and `host` cannot be added or removed (Envoy refuses both), values
may not hold line breaks, and a `%` in a value must start a substitution Envoy knows
(`%DOWNSTREAM_REMOTE_ADDRESS%`, `%REQ(x-user)%`) or be written `%%`.

A request header may also come from a secret (`headerSecretRef`): every key of a header
secret is a header, its value sent as written (a `%` in it is literal, never a
substitution). Secrets are looked up through the reference graph on behalf of the resource
whose option names them, so that a change to the secret re-translates that resource.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gw.api.headers import HeaderManipulation, HeaderValueOption
from gw.api.meta import ResourceKey, ResourceRef
from gw.api.secret import HEADER_TYPE, OPAQUE_TYPE
from gw.translator import ir
from gw.translator.gateway.secrets import resolve_secret
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_SUBSTITUTION = re.compile(r"%([A-Z][A-Z0-9_]*)(?:\(([^)]*)\))?(?::(\d+))?%")

#: Envoy substitutions without parameters (each checked against `envoy --mode validate`).
PLAIN_COMMANDS = frozenset(
    """
    DOWNSTREAM_REMOTE_ADDRESS DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT DOWNSTREAM_REMOTE_PORT
    DOWNSTREAM_DIRECT_REMOTE_ADDRESS DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT
    DOWNSTREAM_DIRECT_REMOTE_PORT DOWNSTREAM_LOCAL_ADDRESS DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT
    DOWNSTREAM_LOCAL_PORT DOWNSTREAM_LOCAL_URI_SAN DOWNSTREAM_PEER_URI_SAN
    DOWNSTREAM_LOCAL_SUBJECT DOWNSTREAM_PEER_SUBJECT DOWNSTREAM_PEER_ISSUER
    DOWNSTREAM_TLS_SESSION_ID DOWNSTREAM_TLS_CIPHER DOWNSTREAM_TLS_VERSION
    DOWNSTREAM_PEER_FINGERPRINT_256 DOWNSTREAM_PEER_FINGERPRINT_1 DOWNSTREAM_PEER_SERIAL
    DOWNSTREAM_PEER_CERT DOWNSTREAM_PEER_CERT_V_START DOWNSTREAM_PEER_CERT_V_END
    REQUESTED_SERVER_NAME UPSTREAM_REMOTE_ADDRESS UPSTREAM_LOCAL_ADDRESS UPSTREAM_CLUSTER
    UPSTREAM_HOST UPSTREAM_TRANSPORT_FAILURE_REASON PROTOCOL HOSTNAME ROUTE_NAME
    VIRTUAL_CLUSTER_NAME RESPONSE_CODE RESPONSE_CODE_DETAILS RESPONSE_FLAGS CONNECTION_ID
    STREAM_ID UNIQUE_ID REQUEST_DURATION RESPONSE_DURATION DURATION BYTES_RECEIVED BYTES_SENT
    UPSTREAM_REQUEST_ATTEMPT_COUNT
    """.split()
)
#: Envoy substitutions that take parameters: `%REQ(x-user)%`; START_TIME's are optional.
PARAMETER_COMMANDS = frozenset(
    {"REQ", "RESP", "TRAILER", "DYNAMIC_METADATA", "UPSTREAM_METADATA", "FILTER_STATE", "METADATA"}
    | {"ENVIRONMENT", "START_TIME"}
)
#: What `%METADATA(TYPE:namespace:key)%` reads (a route's `envoyMetadata` is ROUTE).
METADATA_TYPES = frozenset(
    {"DYNAMIC", "CLUSTER", "ROUTE", "UPSTREAM_HOST", "LISTENER", "VIRTUAL_HOST"}
)
#: Substitutions that refuse a `:length` suffix.
NO_LENGTH_COMMANDS = PLAIN_COMMANDS | {"UPSTREAM_METADATA", "START_TIME"}


def header_name_problem(name: str) -> str | None:
    """Why gw cannot add, set or remove a header called `name`; None when it can."""
    if name.startswith(":"):
        return (
            f"{name!r} is a pseudo-header, which cannot be added or removed "
            "(change the path with prefixRewrite, the host with hostRewrite)"
        )
    if name.lower() == "host":
        return "the host header cannot be added or removed here; use the route option hostRewrite"
    if not _TOKEN.fullmatch(name):
        return f"{name!r} is not a valid HTTP header name (letters, digits and !#$%&'*+.^_`|~-)"
    return None


def line_break_problem(text: str) -> str | None:
    if any(c in text for c in "\r\n\0"):
        return "a header value may not contain line breaks or NUL characters"
    return None


def substitution_problem(value: str) -> str | None:
    """Why Envoy would refuse `value` as a header value with `%COMMAND%` substitutions."""
    at = 0
    while (start := value.find("%", at)) >= 0:
        if value.startswith("%%", start):
            at = start + 2
            continue
        match = _SUBSTITUTION.match(value, start)
        if match is None:
            return (
                f"the % at position {start} starts no substitution: write %% for a literal %, "
                "or a substitution such as %DOWNSTREAM_REMOTE_ADDRESS% or %REQ(x-name)%"
            )
        command, params, length = match.groups()
        if command in PLAIN_COMMANDS and params is not None:
            return f"%{command}% takes no parameters"
        if command in NO_LENGTH_COMMANDS and length is not None:
            return f"%{command}% takes no :length"
        if command in PARAMETER_COMMANDS - {"START_TIME"} and not params:
            return f"%{command}(...)% needs parameters, for example %{command}(x-name)%"
        if command == "METADATA" and params and params.split(":")[0] not in METADATA_TYPES:
            kinds = ", ".join(sorted(METADATA_TYPES))
            return f"%METADATA(TYPE:namespace:key)% takes a TYPE of {kinds}"
        if command not in PLAIN_COMMANDS | PARAMETER_COMMANDS:
            return f"%{command}% is not a substitution gw knows (see docs/headers.md)"
        at = match.end()
    return None


#: Why a response header cannot come from a secret (the established gateway's response
#: headers have no `headerSecretRef`).
SECRETS_NOT_FOR_RESPONSES = (
    "only request headers can come from a secret; use header.key and header.value"
)


@dataclass(frozen=True, slots=True)
class HeaderSecrets:
    """Where `headerSecretRef`s are resolved: the reference graph, on behalf of `referrer`
    (the resource whose option names the secret)."""

    refs: Refs
    referrer: ResourceKey


def build_header_manipulation(
    options: HeaderManipulation | None,
    field: str,
    report: ResourceReport,
    secrets: HeaderSecrets,
) -> ir.HeaderManipulation | None:
    """The checked manipulation, or None when there is none or some part is bad (reported).
    Request headers are taken from secrets through `secrets`."""
    if options is None:
        return None
    errors = len(report.errors)
    built = ir.HeaderManipulation(
        request_headers_to_add=headers_to_add(
            options.request_headers_to_add, f"{field}.requestHeadersToAdd", report, secrets
        ),
        request_headers_to_remove=headers_to_remove(
            options.request_headers_to_remove, f"{field}.requestHeadersToRemove", report
        ),
        response_headers_to_add=headers_to_add(
            options.response_headers_to_add, f"{field}.responseHeadersToAdd", report, None
        ),
        response_headers_to_remove=headers_to_remove(
            options.response_headers_to_remove, f"{field}.responseHeadersToRemove", report
        ),
    )
    return built if len(report.errors) == errors else None


def headers_to_add(
    options: list[HeaderValueOption],
    field: str,
    report: ResourceReport,
    secrets: HeaderSecrets | None,
) -> tuple[ir.HeaderValue, ...]:
    """The headers to add; those of `headerSecretRef`s are read through `secrets` (None for
    response headers, which cannot come from secrets)."""
    out: list[ir.HeaderValue] = []
    for i, option in enumerate(options):
        where = f"{field}[{i}]"
        if option.header_secret_ref is not None:
            if option.header is not None:
                report.error(where, "set header or headerSecretRef, not both")
            elif secrets is None:
                report.error(f"{where}.headerSecretRef", SECRETS_NOT_FOR_RESPONSES)
            else:
                out += secret_headers(
                    option.header_secret_ref,
                    option.append is not False,
                    f"{where}.headerSecretRef",
                    secrets,
                    report,
                )
            continue
        if option.header is None:
            report.error(where, "set header.key and header.value")
            continue
        name_problem = header_name_problem(option.header.key)
        if name_problem is not None:
            report.error(f"{where}.header.key", name_problem)
        value = option.header.value
        value_problem = line_break_problem(value) or substitution_problem(value)
        if value_problem is not None:
            report.error(f"{where}.header.value", value_problem)
        if name_problem is None and value_problem is None:
            out.append(
                ir.HeaderValue(
                    name=option.header.key.lower(),
                    value=value,
                    append=option.append is not False,
                )
            )
    return tuple(out)


def secret_headers(
    ref: ResourceRef, append: bool, field: str, secrets: HeaderSecrets, report: ResourceReport
) -> list[ir.HeaderValue]:
    """One header per key of the header secret `ref` names, in the order of the keys.
    Messages name the secret and its keys, never a value."""
    secret, key = resolve_secret(
        ref,
        secrets.referrer,
        field,
        secrets.refs,
        report,
        missing="list did not find secret {where}",
    )
    if secret is None:
        return []
    where = f"Secret {key.namespace}.{key.name}"
    if secret.type not in (HEADER_TYPE, OPAQUE_TYPE):
        report.error(
            field, f"{where} was not a Header secret: its type is {secret.type}, not {HEADER_TYPE}"
        )
        return []
    names = secret.keys()
    if not names:
        report.warning(field, f"{where} holds no headers: each of its keys is a header to add")
    out = []
    for name in names:
        value = secret.value(name) or ""
        problem = header_name_problem(name) or line_break_problem(value)
        if problem is not None:
            report.error(field, f"{where}, key {name!r}: {problem}")
            continue
        if not value:
            continue  # Envoy adds no header with an empty value (nor does the established gateway)
        # Envoy reads `%` in a header value as the start of a substitution: a secret's value
        # is sent as written.
        literal = value.replace("%", "%%")
        out.append(
            ir.HeaderValue(
                name=name.lower(),
                value=literal,
                append=append,
                secret=f"{key.namespace}.{key.name}",
            )
        )
    return out


def headers_to_remove(names: list[str], field: str, report: ResourceReport) -> tuple[str, ...]:
    out = []
    for i, name in enumerate(names):
        problem = header_name_problem(name)
        if problem is not None:
            report.error(f"{field}[{i}]", problem)
        elif name.lower() not in out:
            out.append(name.lower())
    return tuple(out)
