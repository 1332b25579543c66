"""The names Kubernetes gives objects, enforced in folder mode too.

A folder is meant to be deployable to a cluster as is, and a name the API server would
refuse (`../x`, `a/b`, `Web`, 300 characters) is refused here with the same rule, so that
a folder that works with `gw up` also applies to a cluster. Resource names are DNS-1123
subdomains, namespaces DNS-1123 labels (what the API server checks for namespaced custom
resources and for Namespaces).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

SUBDOMAIN_MAX = 253
LABEL_MAX = 63

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_LABEL_RE = re.compile(_LABEL)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN)


def subdomain(value: str) -> str:
    """A valid resource name, or ValueError saying the Kubernetes rule."""
    return _checked(
        value,
        _SUBDOMAIN_RE,
        SUBDOMAIN_MAX,
        "name",
        "subdomain",
        "lower case alphanumeric characters, '-' or '.'",
        "'example.com'",
    )


def label(value: str) -> str:
    """A valid namespace, or ValueError saying the Kubernetes rule."""
    return _checked(
        value,
        _LABEL_RE,
        LABEL_MAX,
        "namespace",
        "label",
        "lower case alphanumeric characters or '-'",
        "'my-name' or '123-abc'",
    )


def _checked(
    value: str, rule: re.Pattern[str], most: int, noun: str, kind: str, chars: str, eg: str
) -> str:
    if len(value) > most:
        raise ValueError(
            f"a {noun} must be no more than {most} characters (a DNS-1123 {kind}, as "
            f"Kubernetes requires); this one has {len(value)}"
        )
    if not rule.fullmatch(value):
        raise ValueError(
            f"not a valid {noun}: Kubernetes requires a DNS-1123 {kind} (RFC 1123, lower "
            f"case): {chars}, starting and ending with an alphanumeric character (e.g. {eg}; "
            f"regex '{rule.pattern}')"
        )
    return value


#: `metadata.name` of every resource (the schema states the rule; the validator words it).
ResourceName = Annotated[
    str,
    AfterValidator(subdomain),
    Field(json_schema_extra={"maxLength": SUBDOMAIN_MAX, "pattern": f"^{_SUBDOMAIN}$"}),
]
#: `metadata.namespace` of every resource.
NamespaceName = Annotated[
    str,
    AfterValidator(label),
    Field(json_schema_extra={"maxLength": LABEL_MAX, "pattern": f"^{_LABEL}$"}),
]
