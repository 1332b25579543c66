"""`apiKeyAuth`: the API keys a request may present, from Secrets of type
`extauth.vendor.io/apikey` (selected by label or named), already read by stage 1.

A key travels only as its SHA-256 digest (`api_key_sha256`): the server hashes the key a
request presents and looks the digest up, so neither the xDS configuration nor a dump of it
holds a usable key. `secret_data` holds the secret's other values that some
`headersFromMetadataEntry` copies into a header (only those); dumps redact both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

DEFAULT_HEADER = "api-key"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKey:
    api_key_sha256: str = field(repr=False)
    #: Who the key identifies: the name of its secret.
    user: str
    secret_data: tuple[tuple[str, str], ...] = field(default=(), repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataHeader:
    """`headersFromMetadataEntry.<header>`: the secret's `key` goes into `header` (and into
    the chain's state under that name); `required` refuses keys whose secret lacks it."""

    header: str
    key: str
    required: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKeyAuth:
    kind: Literal["api_key"] = "api_key"
    header_name: str = DEFAULT_HEADER
    keys: tuple[ApiKey, ...] = ()
    headers_from_metadata: tuple[MetadataHeader, ...] = ()
