"""Secret (`v1`): the orchestrator's secret shape, for TLS, OAuth and API key material.

Values are in `data` (base64) or `stringData` (plain). Secret values are never rendered by
`__repr__`, logs or gwctl output: only `redacted()` views leave this module.
"""

from __future__ import annotations

import base64
import binascii
from typing import ClassVar

from pydantic import Field, field_validator

from gw.api.meta import Resource

TLS_TYPE = "kubernetes.io/tls"
OAUTH_TYPE = "extauth.vendor.io/oauth"
APIKEY_TYPE = "extauth.vendor.io/apikey"
#: `username` and `password` of an account gw binds as (an LDAP service account).
ACCOUNT_CREDENTIALS_TYPE = "extauth.vendor.io/accountcredentials"
OPAQUE_TYPE = "Opaque"
#: An encryption key secret: `key` holds 32 bytes (`session.cipherConfig.keyRef`).
ENCRYPTION_KEY_TYPE = "gw.vendor.io.EncryptionKeySecret"
#: A header secret: each key is a header name, its value the header's value
#: (`headerSecretRef` in `requestHeadersToAdd`).
HEADER_TYPE = "gw.vendor.io/header"


class Secret(Resource):
    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Secret"
    PLURAL: ClassVar[str] = "secrets"

    type: str = OPAQUE_TYPE
    data: dict[str, str] = Field(default_factory=dict, repr=False)
    string_data: dict[str, str] = Field(default_factory=dict, repr=False)
    immutable: bool | None = None

    @field_validator("data")
    @classmethod
    def _data_is_base64(cls, data: dict[str, str]) -> dict[str, str]:
        for key, value in data.items():
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError(f"data.{key} is not valid base64") from None
        return data

    def value(self, key: str) -> str | None:
        """The decoded value of `key` (stringData wins, as in the orchestrator)."""
        if key in self.string_data:
            return self.string_data[key]
        if key in self.data:
            return base64.b64decode(self.data[key]).decode("utf-8", errors="replace")
        return None

    def keys(self) -> list[str]:
        return sorted(set(self.data) | set(self.string_data))
