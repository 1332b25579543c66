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
    if len(value) > SUBDOMAIN_MAX:
        raise ValueError(
            f"a name must be no more than {SUBDOMAIN_MAX} characters (a DNS-1123 subdomain, "
            f"as Kubernetes requires); this one has {len(value)}"
        )
    if not _SUBDOMAIN_RE.fullmatch(value):
        raise ValueError(
            "not a valid name: Kubernetes requires a DNS-1123 subdomain (RFC 1123, lower "
            "case): lower case alphanumeric characters, '-' or '.', starting and ending with "
            f"an alphanumeric character (e.g. 'example.com'; regex '{_SUBDOMAIN}')"
        )
    return value


def label(value: str) -> str:
    """A valid namespace, or ValueError saying the Kubernetes rule."""
    if len(value) > LABEL_MAX:
        raise ValueError(
            f"a namespace must be no more than {LABEL_MAX} characters (a DNS-1123 label, as "
            f"Kubernetes requires); this one has {len(value)}"
        )
    if not _LABEL_RE.fullmatch(value):
        raise ValueError(
            "not a valid namespace: Kubernetes requires a DNS-1123 label (RFC 1123, lower "
            "case): lower case alphanumeric characters or '-', starting and ending with an "
            f"alphanumeric character (e.g. 'my-name' or '123-abc'; regex '{_LABEL}')"
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
