"""`apiKeyAuth` → `gw.wire.extauth_apikey.ApiKeyAuth`: the secrets are read here.

Secrets of type `extauth.vendor.io/apikey` are picked by `labelSelector` (in every
namespace gw reads) or named by `apiKeySecretRefs` (`k8sSecretApikeyStorage`'s, or the older
top-level fields); each gives its `api-key` value (sent on as a SHA-256 digest) and the
values `headersFromMetadataEntry` copies. The AuthConfig is linked to each secret it uses,
so a new translation, and with it a new configuration for the server, follows every edit:
rotating a key is editing its secret.
"""

from __future__ import annotations

import hashlib

from gw import api
from gw.api.authconfig_apikey import ApiKeyAuth, MetadataEntry
from gw.api.secret import APIKEY_TYPE
from gw.translator.gateway.authstep import TOKEN, Needs, StepContext
from gw.wire import extauth_apikey

API_KEY = "api-key"


def needs(apikey: ApiKeyAuth) -> Needs:
    return Needs(headers=(_header_name(apikey),))


def build(apikey: ApiKeyAuth, ctx: StepContext) -> extauth_apikey.ApiKeyAuth | None:
    _refuse_unsupported(apikey, ctx)
    header = _header_name(apikey)
    if not TOKEN.match(header):
        ctx.error("headerName", f"{apikey.header_name!r} is not a header name")
    copies = _copies(apikey, ctx)
    secrets = _secrets(apikey, ctx)
    if ctx.report.errors:
        return None
    keys: dict[str, extauth_apikey.ApiKey] = {}
    for secret in secrets:
        key = _key(secret, copies, apikey.skip_metadata_validation, ctx)
        if key is None:
            continue
        if key.api_key_sha256 in keys:
            ctx.warning(
                "",
                f"secrets {keys[key.api_key_sha256].user} and {secret.metadata.name} hold the same "
                f"API key: it identifies {keys[key.api_key_sha256].user}",
            )
            continue
        keys[key.api_key_sha256] = key
    return extauth_apikey.ApiKeyAuth(
        header_name=header,
        keys=tuple(sorted(keys.values(), key=lambda k: (k.user, k.api_key_sha256))),
        headers_from_metadata=copies,
    )


def _header_name(apikey: ApiKeyAuth) -> str:
    return (apikey.header_name or extauth_apikey.DEFAULT_HEADER).lower()


def _refuse_unsupported(apikey: ApiKeyAuth, ctx: StepContext) -> None:
    for field, value, why in (
        ("aerospikeApikeyStorage", apikey.aerospike_apikey_storage, "keep API keys in secrets"),
        ("hmac", apikey.hmac, "keys are compared as they are (gw stores only their digests)"),
        ("digest", apikey.digest, "keys are compared as they are (gw stores only their digests)"),
        ("match", apikey.match, "it needs digest"),
    ):
        if value is not None:
            ctx.not_supported(field, why)
    if apikey.skip_metadata_validation:
        ctx.warning(
            "skipMetadataValidation",
            "has no effect: gw checks the secrets' values when it reads them, not per request",
        )


def _copies(apikey: ApiKeyAuth, ctx: StepContext) -> tuple[extauth_apikey.MetadataHeader, ...]:
    """`headersFromMetadataEntry` (and its older spelling `headersFromMetadata`)."""
    entries: dict[str, tuple[str, MetadataEntry]] = {}
    for field, given in (
        ("headersFromMetadata", apikey.headers_from_metadata),
        ("headersFromMetadataEntry", apikey.headers_from_metadata_entry),
    ):
        for header, entry in given.items():
            entries[header.lower()] = (f"{field}.{header}", entry)
    out = []
    for header, (field, entry) in sorted(entries.items()):
        if not TOKEN.match(header):
            ctx.error(field, f"{header!r} is not a header name")
        elif not entry.name:
            ctx.error(f"{field}.name", "required: the secret's key to copy")
        else:
            out.append(
                extauth_apikey.MetadataHeader(
                    header=header, key=entry.name, required=entry.required
                )
            )
    return tuple(out)


def _secrets(apikey: ApiKeyAuth, ctx: StepContext) -> list[api.Secret]:
    storage = apikey.k8s_secret_apikey_storage
    labels, refs, field = apikey.label_selector, apikey.api_key_secret_refs, ""
    if storage is not None:
        if labels or refs:
            ctx.warning("labelSelector", "ignored: k8sSecretApikeyStorage names the secrets")
        labels, refs, field = (
            storage.label_selector,
            storage.api_key_secret_refs,
            "k8sSecretApikeyStorage.",
        )
    if not labels and not refs:
        ctx.error(
            f"{field}labelSelector", "name the API key secrets: labelSelector or apiKeySecretRefs"
        )
        return []
    found: dict[api.ResourceKey, api.Secret] = {}
    for i, ref in enumerate(refs):
        where = f"{field}apiKeySecretRefs[{i}]"
        secret = ctx.refs.resolve(api.Secret, ref, referrer=ctx.key, field=f"{ctx.field}.{where}")
        key = ctx.refs.key(api.Secret, ref, ctx.key)
        if secret is None:
            ctx.error(
                where,
                f"secret {key.namespace}.{key.name} not found: create it with "
                f"`gwctl create secret apikey --namespace {key.namespace} --name {key.name} "
                "--apikey ...`",
            )
        elif secret.type != APIKEY_TYPE:
            ctx.error(
                where,
                f"secret {key.namespace}.{key.name} is of type {secret.type}, not {APIKEY_TYPE}",
            )
        else:
            found[secret.key] = secret
    if labels:
        picked = [
            s
            for s in ctx.refs.of_kind(api.Secret)
            if s.type == APIKEY_TYPE
            and all(s.metadata.labels.get(k) == v for k, v in labels.items())
        ]
        for secret in picked:
            ctx.refs.link(ctx.key, f"{ctx.field}.{field}labelSelector", secret.key)
            found.setdefault(secret.key, secret)
        if not picked:
            ctx.warning(
                f"{field}labelSelector", f"no secret of type {APIKEY_TYPE} has these labels"
            )
    return [found[k] for k in sorted(found)]


def _key(
    secret: api.Secret,
    copies: tuple[extauth_apikey.MetadataHeader, ...],
    skip_validation: bool,
    ctx: StepContext,
) -> extauth_apikey.ApiKey | None:
    name = f"{secret.metadata.namespace}.{secret.metadata.name}"
    value = secret.value(API_KEY)
    if not value:
        ctx.warning("", f"secret {name} has no {API_KEY} value: it is not used")
        return None
    data = []
    for copy in copies:
        found = secret.value(copy.key)
        if found is None:
            continue
        if not skip_validation and any(c in found for c in "\r\n\0"):
            ctx.warning("", f"secret {name}: its {copy.key} value cannot be a header value")
            continue
        data.append((copy.key, found))
    return extauth_apikey.ApiKey(
        api_key_sha256=hashlib.sha256(value.encode()).hexdigest(),
        user=secret.metadata.name,
        secret_data=tuple(sorted(set(data))),
    )
