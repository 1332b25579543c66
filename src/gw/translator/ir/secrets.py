"""Key material, served to Envoy over SDS."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.source import SourceRef


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsSecret:
    """A checked certificate chain and its private key (PEM), served to Envoy over SDS as
    `name`; `ca` (PEM, optional) validates peers. Dumps redact `private_key`."""

    name: str
    source: SourceRef
    certificate_chain: str
    private_key: str
    ca: str | None = None
    not_after: float | None = None
