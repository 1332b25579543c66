"""`gw controlplane --orch`: the control plane of an orchestrator install (the `gw`
deployment).

Resources come from the cluster (`OrchStore`); statuses go back to it, written only by the
replica that holds the Lease; every replica serves xDS, so the proxies may connect to any.
The validation webhook listens on `webhook_port` (HTTPS) with the certificate of the
`gw-validation-certs` Secret, and keeps the webhook configuration's `caBundle` current.
"""

from __future__ import annotations

import logging
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lightkube import AsyncClient

from gw import defaults, lifecycle
from gw.asgi import AsgiServer, quiet_config
from gw.controlplane import ControlPlane
from gw.orch.admission import Validator
from gw.orch.admission import build_app as build_admission_app
from gw.orch.client import connect
from gw.orch.leader import LeaderElector, Timing
from gw.orch.store import OrchStore, configured_watch_namespaces
from gw.orch.webhook import ensure_certificate, publish_ca_bundle
from gw.servers import Serving, controlplane_servers
from gw.translator.options import Options

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class OrchOptions:
    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str = defaults.NAMESPACE
    watch_namespaces: tuple[str, ...] = ()
    leader_election: bool = True
    timing: Timing = Timing()
    webhook_port: int | None = defaults.WEBHOOK_PORT
    webhook_service: str = "gw"
    allow_warnings: bool = True


async def run(orch: OrchOptions, options: Options, serving: Serving) -> None:
    """Serve until SIGINT/SIGTERM; raises `lifecycle.Failure` when a server cannot start or
    stops on its own. The elector hands its Lease back when it stops."""
    client = connect(orch.kubeconfig, orch.context)
    try:
        await _serve(client, orch, options, serving)
    finally:
        await client.close()


async def _serve(
    client: AsyncClient, orch: OrchOptions, options: Options, serving: Serving
) -> None:
    namespaces = orch.watch_namespaces or await configured_watch_namespaces(client, orch.namespace)
    elector = (
        LeaderElector(client, orch.namespace, timing=orch.timing) if orch.leader_election else None
    )
    store = OrchStore(
        client,
        namespace=orch.namespace,
        watch_namespaces=namespaces,
        is_leader=elector.is_leader if elector else lambda: True,
    )
    plane = controlplane_servers(store, options, serving)
    store.writer.translated = lambda: plane.controlplane.snapshot
    servers = list(plane.servers)
    if elector is not None:
        elector.on_start_leading = store.writer.mark_all
        servers.append(lifecycle.TaskServer("leader election", elector.run))
    if orch.webhook_port is not None:
        webhook = await _webhook(orch, client, plane.controlplane, serving.bind, orch.webhook_port)
        servers.append(webhook)
    watched = ", ".join(namespaces) or "all namespaces"
    log.info(
        "control plane on the orchestrator: namespace %s, watching %s", orch.namespace, watched
    )
    await lifecycle.serve(servers)


async def _webhook(
    orch: OrchOptions, client: AsyncClient, plane: ControlPlane, bind: str, port: int
) -> AsgiServer:
    """The validation webhook, with the certificate shared by the replicas (made or read
    now, before anything serves) and its CA published in the webhook configuration."""
    made = await ensure_certificate(client, orch.namespace, orch.webhook_service)
    folder = Path(tempfile.mkdtemp(prefix="gw-webhook-"))
    cert_file, key_file = folder / "tls.crt", folder / "tls.key"
    cert_file.write_text(made.cert_pem)
    key_file.touch(mode=0o600)
    key_file.write_text(made.key_pem)
    await publish_ca_bundle(client, made.ca_pem)
    validator = Validator(plane, allow_warnings=orch.allow_warnings)
    config = quiet_config(
        build_admission_app(validator),
        bind,
        port,
        ssl_certfile=str(cert_file),
        ssl_keyfile=str(key_file),
        ssl_cert_reqs=ssl.CERT_NONE,
    )
    return AsgiServer("validation webhook", config)
