"""`apiKeyAuth` of an AuthConfig: API keys kept in Secrets of type `extauth.vendor.io/apikey`
(key `api-key`), chosen by label or by name.

The top-level `labelSelector` / `apiKeySecretRefs` are the older spelling of
`k8sSecretApikeyStorage`'s (which wins when both are set), and `headersFromMetadata` the
older spelling of `headersFromMetadataEntry`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gw.api.meta import Model, ResourceRef


class MetadataEntry(Model):
    name: str
    required: bool = False


class SecretApiKeyStorage(Model):
    label_selector: dict[str, str] = {}
    api_key_secret_refs: list[ResourceRef] = []


class ApiKeyAuth(Model):
    label_selector: dict[str, str] = {}
    api_key_secret_refs: list[ResourceRef] = []
    header_name: str | None = None
    headers_from_metadata: dict[str, MetadataEntry] = {}
    headers_from_metadata_entry: dict[str, MetadataEntry] = {}
    k8s_secret_apikey_storage: SecretApiKeyStorage | None = Field(
        None, alias="k8sSecretApikeyStorage"
    )
    aerospike_apikey_storage: dict[str, Any] | None = None
    skip_metadata_validation: bool = False
    hmac: dict[str, Any] | None = None
    digest: dict[str, Any] | None = None
    match: dict[str, Any] | None = None
