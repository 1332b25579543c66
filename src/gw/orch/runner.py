"""`gw controlplane --orch`: the control plane of an orchestrator install (the `gw`
deployment).

Resources come from the cluster (`OrchStore`); statuses go back to it, written only by the
replica that holds the Lease; every replica serves xDS, so the proxies may connect to any.
The validation webhook listens on `webhook_port` (HTTPS) with the certificate of the
`gw-validation-certs` Secret, and keeps the webhook configuration's `caBundle` current.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from gw import __version__
from gw.asgi import EmbeddedServer
from gw.controlplane import ControlPlane
from gw.orch.admission import Validator
from gw.orch.admission import build_app as build_admission_app
from gw.orch.client import connect
from gw.orch.leader import LeaderElector, Timing
from gw.orch.store import OrchStore, configured_watch_namespaces
from gw.orch.webhook import WebhookCertificate, ensure_certificate, publish_ca_bundle
from gw.translator import Options
from gw.up import start_controlplane

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class OrchOptions:
    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str = "gw-system"
    watch_namespaces: tuple[str, ...] = ()
    leader_election: bool = True
    timing: Timing = Timing()
    webhook_port: int | None = 8443
    webhook_service: str = "gw"
    allow_warnings: bool = True


async def run(
    orch: OrchOptions,
    options: Options,
    *,
    bind: str,
    xds_port: int,
    debug_port: int | None,
    discovery: bool,
    xds_socket: Path | None = None,
    dev_port: int | None = None,
    server_version: str = __version__,
) -> None:
    client = connect(orch.kubeconfig, orch.context)
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
    if elector is not None:
        elector.on_start_leading = store.writer.mark_all
    servers = await start_controlplane(
        store,
        options,
        bind=bind,
        xds_port=xds_port,
        debug_port=debug_port,
        discovery=discovery,
        xds_socket=xds_socket,
        dev_port=dev_port,
        server_version=server_version,
    )
    plane = servers.controlplane
    store.writer.translated = lambda: plane.snapshot
    tasks = list(servers.tasks)
    if elector is not None:
        tasks.append(asyncio.create_task(elector.run(), name="leader election"))
    webhook: EmbeddedServer | None = None
    if orch.webhook_port is not None:
        webhook = await _webhook(orch, client, plane, bind)
        tasks.append(asyncio.create_task(webhook.serve(), name="validation webhook"))
    watched = ", ".join(namespaces) or "all namespaces"
    log.info(
        "control plane on the orchestrator: namespace %s, watching %s", orch.namespace, watched
    )
    await _until_stopped(tasks)
    if webhook is not None:
        webhook.should_exit = True
    for stop in servers.stops:
        result = stop()
        if asyncio.iscoroutine(result):
            await result
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)  # the elector releases its Lease
    await client.close()


async def _webhook(
    orch: OrchOptions, client: Any, plane: ControlPlane, bind: str
) -> EmbeddedServer:
    made: WebhookCertificate = await ensure_certificate(
        client, orch.namespace, orch.webhook_service
    )
    folder = Path(tempfile.mkdtemp(prefix="gw-webhook-"))
    cert_file, key_file = folder / "tls.crt", folder / "tls.key"
    cert_file.write_text(made.cert_pem)
    key_file.touch(mode=0o600)
    key_file.write_text(made.key_pem)
    await publish_ca_bundle(client, made.ca_pem)
    validator = Validator(plane, allow_warnings=orch.allow_warnings)
    config = uvicorn.Config(
        build_admission_app(validator),
        host=bind,
        port=orch.webhook_port or 8443,
        log_level="warning",
        lifespan="off",
        access_log=False,
        ssl_certfile=str(cert_file),
        ssl_keyfile=str(key_file),
        ssl_cert_reqs=ssl.CERT_NONE,
    )
    return EmbeddedServer(config)


async def _until_stopped(tasks: list[asyncio.Task[Any]]) -> None:
    """Until SIGTERM/SIGINT, or until a component stops on its own (a failure)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    stopped = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait([stopped, *tasks], return_when=asyncio.FIRST_COMPLETED)
    for task in done:
        if task is not stopped and not task.cancelled() and task.exception() is not None:
            log.error("%s failed", task.get_name(), exc_info=task.exception())
    stopped.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await stopped
