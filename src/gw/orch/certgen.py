"""`gw certgen --orch`: the xDS certificates of an install, kept in Secrets.

Run by the `gw-certgen` Job at install and upgrade (and by the CronJob of the same name on
its schedule); each run re-issues every certificate (`gw.certgen`):

- `gw-xds-ca` (Opaque): the CA and its key, and the CA it replaced while that one is valid;
  only this command reads it;
- `gw-xds-<party>` (`kubernetes.io/tls`: `ca.crt`, `tls.crt`, `tls.key`) for `controlplane`,
  `extauth`, `ratelimit` and each proxy, mounted by the deployments. The orchestrator updates
  mounted Secrets in place; the control plane, Envoy and the components pick the new files up
  without a restart (`gw.xds.tls`).

The CA Secret is written first: no certificate is ever handed out under a CA that was not
kept.
"""

from __future__ import annotations

import base64
import datetime
import logging
from collections.abc import Sequence

from lightkube import AsyncClient
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Secret

from gw import certgen
from gw.orch.client import API_ERRORS, status_code
from gw.xds.tls import CA_FILE, CERT_FILE, KEY_FILE

log = logging.getLogger(__name__)

SECRET_PREFIX = "gw-xds-"
CA_SECRET = SECRET_PREFIX + certgen.CA_PARTY
LABELS = {"app": "gw", "gw": "certgen"}


def secret_name(party: str) -> str:
    return SECRET_PREFIX + party


async def issue_secrets(
    client: AsyncClient,
    namespace: str,
    proxies: Sequence[str],
    *,
    rotate_ca: bool = False,
    validity: datetime.timedelta = certgen.CERT_VALIDITY,
) -> list[str]:
    """Issue every party's certificate into its Secret; returns the Secrets written."""
    current = await _read_authority(client, namespace)
    authority = certgen.renew_authority(current, namespace, rotate_ca=rotate_ca, validity=validity)
    issued = certgen.issue_parties(authority, namespace, proxies, validity)
    if authority is not current:
        log.info("certgen: %s CA in %s", "a new" if current else "the first", CA_SECRET)
    ca_data = {CA_FILE: authority.ca.cert_pem, certgen.CA_KEY_FILE: authority.ca.key_pem}
    if authority.previous_cert_pem:
        ca_data[certgen.PREVIOUS_CA_FILE] = authority.previous_cert_pem
    written = [await _put(client, namespace, CA_SECRET, "Opaque", ca_data)]
    for party in issued:
        data = {CA_FILE: party.ca_pem, CERT_FILE: party.cert.cert_pem, KEY_FILE: party.cert.key_pem}
        name = secret_name(party.name)
        written.append(await _put(client, namespace, name, "kubernetes.io/tls", data))
    log.info("certgen: issued %s in %s", ", ".join(written[1:]), namespace)
    return written


async def _read_authority(client: AsyncClient, namespace: str) -> certgen.Authority | None:
    try:
        found = await client.get(Secret, CA_SECRET, namespace=namespace)
    except API_ERRORS as exc:
        if status_code(exc) == 404:
            return None
        raise
    data = {k: base64.b64decode(v).decode() for k, v in (found.data or {}).items()}
    if CA_FILE not in data or certgen.CA_KEY_FILE not in data:
        log.warning("certgen: Secret %s lacks the CA or its key: making a new CA", CA_SECRET)
        return None
    return certgen.Authority(
        certgen.KeyPair(data[CA_FILE], data[certgen.CA_KEY_FILE]),
        data.get(certgen.PREVIOUS_CA_FILE, ""),
    )


async def _put(
    client: AsyncClient, namespace: str, name: str, kind: str, data: dict[str, str]
) -> str:
    """Create the Secret, or replace what it holds."""
    body = Secret(
        metadata=ObjectMeta(name=name, namespace=namespace, labels=dict(LABELS)),
        type=kind,
        data={k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    )
    try:
        await client.create(body)
    except API_ERRORS as exc:
        if status_code(exc) != 409:
            raise
        await client.replace(body)
    return name
