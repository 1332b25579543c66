"""`rbac` (on a virtual host or a route) → `ir.Rbac`: policies on verified JWT claims.

Claims are read from the payloads the virtual host's JWT providers verified, so a policy on
a host without providers could never allow anything: that, a policy without principals, a
principal without claims, a provider name that does not exist and a claim value its matcher
cannot use are findings naming the field (fail closed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from gw.api.rbac import JwtPrincipal, Permissions, Policy, Rbac
from gw.translator import ir
from gw.translator.regex import RegexError, capture_groups
from gw.translator.reports import ResourceReport

_KINDS: dict[str, Literal["exact", "bool", "list_contains", "regex"]] = {
    "EXACT_STRING": "exact",
    "BOOLEAN": "bool",
    "LIST_CONTAINS": "list_contains",
    "REGEX_MATCH": "regex",
}
#: The spellings Go's strconv.ParseBool accepts, as the established gateway does.
_BOOLS = {"1": "true", "t": "true", "true": "true", "0": "false", "f": "false", "false": "false"}
_METHOD_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)


def build_rbac(
    rbac: Rbac,
    *,
    field: str,
    providers: Mapping[str, str],
    report: ResourceReport,
) -> ir.Rbac | None:
    """`providers` maps the virtual host's provider names to their IR names. None when a
    finding makes the policies unusable."""
    if rbac.disable:
        if rbac.policies:
            report.warning(f"{field}.policies", "ignored: rbac is disabled here")
        return ir.Rbac(disabled=True)
    if not rbac.policies:
        report.warning(f"{field}.policies", "rbac has no policies: every request is denied (403)")
    errors_before = len(report.errors)
    policies = [
        _policy(name, rbac.policies[name], f"{field}.policies.{name}", providers, report)
        for name in sorted(rbac.policies)
    ]
    if len(report.errors) > errors_before:
        return None
    return ir.Rbac(policies=tuple(policies))


def _policy(
    name: str,
    policy: Policy,
    field: str,
    providers: Mapping[str, str],
    report: ResourceReport,
) -> ir.RbacPolicy:
    if not policy.principals:
        report.error(
            f"{field}.principals",
            "a policy needs at least one principal; without one it can never allow a request",
        )
    delimiter = policy.nested_claim_delimiter or None
    principals = [
        _principal(
            p.jwt_principal, f"{field}.principals[{i}].jwtPrincipal", delimiter, providers, report
        )
        for i, p in enumerate(policy.principals)
    ]
    methods, prefix = _permissions(policy.permissions, f"{field}.permissions", report)
    return ir.RbacPolicy(
        name=name,
        methods=methods,
        path_prefix=prefix,
        principals=tuple(principals),
    )


def _principal(
    principal: JwtPrincipal,
    field: str,
    delimiter: str | None,
    providers: Mapping[str, str],
    report: ResourceReport,
) -> ir.RbacPrincipal:
    if not providers:
        report.error(
            field,
            "claims come from a verified JWT, but this virtual host has no jwt providers; "
            "set spec.virtualHost.options.jwtStaged (or jwt) providers",
        )
    keys = tuple(sorted(providers.values()))
    if principal.provider is not None:
        if principal.provider in providers:
            keys = (providers[principal.provider],)
        elif providers:
            known = ", ".join(sorted(providers))
            report.error(
                f"{field}.provider",
                f"no provider {principal.provider!r} among the JWT providers of the virtual "
                f"host and route (there are: {known})",
            )
    if not principal.claims:
        report.error(
            f"{field}.claims",
            "a principal needs at least one claim; to allow any verified token, match a claim "
            "every token carries, such as iss",
        )
    kind = _KINDS[principal.matcher]
    claims = []
    for claim in sorted(principal.claims):
        where = f"{field}.claims.{claim}"
        path = tuple(claim.split(delimiter)) if delimiter else (claim,)
        if not all(path):
            report.error(where, f"{claim!r} is not a claim name (empty part)")
            continue
        value = _value(kind, principal.claims[claim], where, report)
        if value is not None:
            claims.append(ir.ClaimMatch(path=path, kind=kind, value=value))
    return ir.RbacPrincipal(providers=keys, claims=tuple(claims))


def _value(kind: str, value: str, field: str, report: ResourceReport) -> str | None:
    if kind == "bool":
        parsed = _BOOLS.get(value.lower())
        if parsed is None:
            report.error(
                field, f"Value cannot be parsed to a bool to use ClaimMatcher.BOOLEAN: {value}"
            )
        return parsed
    if kind == "regex":
        try:
            capture_groups(value)
        except RegexError as exc:
            report.error(field, str(exc))
            return None
    return value


def _permissions(
    permissions: Permissions | None, field: str, report: ResourceReport
) -> tuple[tuple[str, ...], str | None]:
    if permissions is None:
        return (), None
    methods = []
    for i, method in enumerate(permissions.methods):
        if not method or not set(method) <= _METHOD_CHARS:
            report.error(f"{field}.methods[{i}]", f"{method!r} is not an HTTP method")
            continue
        if method != method.upper():
            report.warning(
                f"{field}.methods[{i}]",
                f"methods are case-sensitive; {method!r} only matches requests that send it so",
            )
        methods.append(method)
    prefix = permissions.path_prefix
    if prefix is not None and not prefix.startswith("/"):
        report.error(f"{field}.pathPrefix", f"{prefix!r} must start with /")
    return tuple(methods), prefix
