"""What stage 1 hands the builder of one `spec.configs[]` entry: where the entry is (for
findings and references) and the checks every kind shares (header names, URLs, durations).

Each kind's builder (`authconfig_<kind>.py`) turns its API model into its wire type with a
`StepContext`, reporting every problem on the AuthConfig under `field`; it returns None when
the entry cannot be served.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from gw import api
from gw.api.duration import duration_ms
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

#: An HTTP token (RFC 9110): what cookie and header names must be.
TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


@dataclass(frozen=True, slots=True)
class StepContext:
    auth_config: api.AuthConfig
    #: The entry's kind field, e.g. `spec.configs[1].basicAuth`.
    field: str
    refs: Refs
    report: ResourceReport

    @property
    def key(self) -> api.ResourceKey:
        return self.auth_config.key

    def error(self, field: str, message: str) -> None:
        """An error on `<the entry's field>.<field>` (`field` "" for the entry's kind)."""
        self.report.error(f"{self.field}.{field}" if field else self.field, message)

    def warning(self, field: str, message: str) -> None:
        self.report.warning(f"{self.field}.{field}" if field else self.field, message)

    def not_supported(self, field: str, why: str) -> None:
        self.error(field, f"{field.rsplit('.', 1)[-1]} is not supported: {why}")

    def header_names(self, field: str, names: list[str] | tuple[str, ...]) -> bool:
        """True when every name is a header name (each one that is not is reported)."""
        ok = True
        for i, name in enumerate(names):
            if not TOKEN.match(name):
                self.error(f"{field}[{i}]", f"{name!r} is not a header name")
                ok = False
        return ok

    def absolute_url(self, field: str, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self.error(field, f"{url!r} is not an absolute http(s) URL")
            return False
        return True


def milliseconds(duration: str | None, default: int) -> int:
    """A duration the API model has already checked, in whole milliseconds."""
    return default if duration is None else int(duration_ms(duration))


@dataclass(frozen=True, slots=True)
class Needs:
    """What Envoy must send the extauth server for a kind of check: request headers (None:
    all of them) and dynamic metadata namespaces."""

    headers: tuple[str, ...] | None = ()
    metadata: tuple[str, ...] = ()


def secret_value(
    ref: api.ResourceRef, kind: str, data_key: str, field: str, ctx: StepContext, create: str
) -> str | None:
    """The value `data_key` of the secret `ref` names, which must be of type `kind`."""
    secret = ctx.refs.resolve(api.Secret, ref, referrer=ctx.key, field=f"{ctx.field}.{field}")
    key = ctx.refs.key(api.Secret, ref, ctx.key)
    where = f"{key.namespace}.{key.name}"
    if secret is None:
        ctx.error(
            field,
            f"secret {where} not found: create it with `gwctl create secret {create} "
            f"--namespace {key.namespace} --name {key.name} ...`",
        )
        return None
    if secret.type != kind:
        ctx.error(field, f"secret {where} is of type {secret.type}, not {kind}")
        return None
    value = secret.value(data_key)
    if not value:
        ctx.error(field, f"secret {where} has no {data_key} value")
        return None
    return value
