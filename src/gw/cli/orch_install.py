"""`OrchInstall`: gwctl against an orchestrator install (deploy/helm/gw or deploy/manifests).

- the control plane's admin API (`/statuses`, `/snapshots/...`): the `gw` service's port 9091
  through the API server's service proxy (no port-forward);
- the proxy URL and address: the `gateway-proxy` Service, as REFERENCE.md §7.4 reads it;
- components: the Deployments of the namespace and their pods; logs: the pods' logs;
- new resources (`gwctl create ...`): created in the cluster;
- Envoy's admin (port 19000, on the pod's loopback) and xDS (9977, gRPC): through
  `kubectl port-forward`, which needs `kubectl` and a real API server.

Selected by `GW_INSTALL=orch`, or when there is no `gw up` on this machine and a kubeconfig
is there (`$KUBECONFIG`, `~/.kube/config`, or in-cluster).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gw import defaults
from gw.cli.install import (
    CONTROLLER_NAMESPACE,
    Component,
    Install,
    InstallError,
    LogSource,
)
from gw.orch.client import ClusterClient, ClusterError

ADMIN_SERVICE = "gw"
ADMIN_PORT = defaults.DEBUG_PORT
SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")


def cluster_configured() -> bool:
    """A kubeconfig is there to use: `$KUBECONFIG`, `~/.kube/config`, or in-cluster."""
    return bool(
        os.environ.get("KUBECONFIG")
        or (Path.home() / ".kube" / "config").exists()
        or SERVICE_ACCOUNT_TOKEN.exists()
    )


class PodLog(LogSource):
    def __init__(self, cluster: ClusterClient, namespace: str, pod: str, name: str) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.pod = pod
        self.name = name

    def lines(self) -> Iterator[str]:
        try:
            yield from self.cluster.log_lines(self.namespace, self.pod)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None

    def follow(self, poll: float = 0.1) -> Iterator[str]:
        try:
            yield from self.cluster.log_lines(self.namespace, self.pod, follow=True)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None


class OrchInstall(Install):
    kind = "orchestrator"

    def __init__(
        self,
        kubeconfig: Path | None = None,
        context: str | None = None,
        namespace: str = CONTROLLER_NAMESPACE,
    ) -> None:
        try:
            self.cluster = ClusterClient(kubeconfig, context)
        except Exception as exc:  # noqa: BLE001 (a missing or broken kubeconfig)
            raise InstallError(f"cannot use the orchestrator's kubeconfig: {exc}") from None
        self.namespace = namespace

    def admin(self, path: str) -> Any:
        try:
            response = self.cluster.service_proxy(self.namespace, ADMIN_SERVICE, ADMIN_PORT, path)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None
        where = f"service {ADMIN_SERVICE}:{ADMIN_PORT} in {self.namespace}"
        try:
            body = response.json()
        except ValueError:
            raise InstallError(
                f"{where} answered {response.status_code} with no JSON; is START_STATS_SERVER "
                "set on deployment gw?"
            ) from None
        if response.status_code >= 400 and body.get("kind") == "Status":
            raise InstallError(
                f"cannot reach the gw control plane ({where}): {body.get('message')}"
            )
        if not isinstance(body, dict):
            raise InstallError(f"{where} did not answer with the admin envelope")
        if body.get("error"):
            raise InstallError(f"{where}{path}: {body['error']}")
        return body.get("data")

    def proxy_url(self, name: str, namespace: str, port: str) -> str:
        host, number, port_name = self._proxy_address(name, namespace, port)
        if port_name in ("http", "https"):
            return f"{port_name}://{host}:{number}"
        return f"{host}:{number}"

    def proxy_address(self, name: str, namespace: str, port: str) -> str:
        host, number, _ = self._proxy_address(name, namespace, port)
        return f"{host}:{number}"

    def _proxy_address(self, name: str, namespace: str, port: str) -> tuple[str, int, str]:
        try:
            service = self.cluster.service(namespace, name)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None
        if service is None:
            raise InstallError(
                f"could not detect '{name}' service in {namespace} namespace. Check that gw "
                f"has been installed properly and is running with 'kubectl get pod -n {namespace}'"
            )
        spec = service.get("spec") or {}
        ports = spec.get("ports") or []
        chosen = next((p for p in ports if p.get("name") == port), None)
        if chosen is None and len(ports) == 1:
            chosen = ports[0]
        if chosen is None:
            raise InstallError(f"named port {port} not found on service {name}")
        if spec.get("type") == "LoadBalancer":
            ingress = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress")
            if not ingress:
                raise InstallError(f"load balancer ingress not found on service {name}")
            host = ingress[0].get("hostname") or ingress[0].get("ip")
            return str(host), int(chosen["port"]), str(chosen.get("name", ""))
        return str(spec.get("clusterIP")), int(chosen["port"]), str(chosen.get("name", ""))

    @contextlib.contextmanager
    def proxy_admin(self, name: str, namespace: str) -> Iterator[str]:
        try:
            with self.cluster.port_forward(
                namespace, f"deploy/{name}", defaults.PROXY_ADMIN_PORT
            ) as local:
                yield f"http://127.0.0.1:{local}"
        except ClusterError as exc:
            raise InstallError(str(exc)) from None

    @contextlib.contextmanager
    def xds_address(self) -> Iterator[str]:
        try:
            with self.cluster.port_forward(
                self.namespace, f"deploy/{ADMIN_SERVICE}", defaults.XDS_PORT
            ) as local:
                yield f"127.0.0.1:{local}"
        except ClusterError as exc:
            raise InstallError(str(exc)) from None

    def components(self) -> list[Component]:
        try:
            deployments = self.cluster.deployments(self.namespace)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None
        out = []
        for deployment in sorted(deployments, key=lambda d: d["metadata"]["name"]):
            name = deployment["metadata"]["name"]
            wanted = (deployment.get("spec") or {}).get("replicas", 1)
            status = deployment.get("status") or {}
            ready = status.get("availableReplicas") or 0
            pods = self._pods(deployment)
            running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
            restarts = sum(
                c.get("restartCount", 0)
                for p in pods
                for c in (p.get("status") or {}).get("containerStatuses") or []
            )
            available = ready >= min(wanted, 1)
            out.append(
                Component(
                    name=name,
                    namespace=self.namespace,
                    role=(deployment["metadata"].get("labels") or {}).get("gw", name),
                    available=available,
                    running=bool(running) or wanted == 0,
                    restarts=restarts,
                    detail="" if available else f"{ready} of {wanted} replicas available",
                )
            )
        return out

    def _pods(self, deployment: dict[str, Any]) -> list[dict[str, Any]]:
        labels = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        try:
            return self.cluster.pods(self.namespace, labels) if labels else []
        except ClusterError as exc:
            raise InstallError(str(exc)) from None

    def logs(self) -> list[LogSource]:
        sources: list[LogSource] = []
        for deployment in self.cluster.deployments(self.namespace):
            name = deployment["metadata"]["name"]
            for pod in self._pods(deployment):
                pod_name = pod["metadata"]["name"]
                sources.append(PodLog(self.cluster, self.namespace, pod_name, f"{name}/{pod_name}"))
        return sources

    def proxy_log(self, name: str, namespace: str) -> LogSource:
        pods = [
            p
            for d in self.cluster.deployments(namespace)
            if d["metadata"]["name"] == name
            for p in self._pods(d)
        ]
        if not pods:
            raise InstallError(f"no running pod of deployment {name} in {namespace}")
        pod = pods[0]["metadata"]["name"]
        return PodLog(self.cluster, namespace, pod, f"{name}/{pod}")

    def write_manifest(self, manifest: dict[str, Any], text: str) -> str:
        try:
            self.cluster.create(manifest)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None
        meta = manifest["metadata"]
        return f"{manifest['kind']} {meta.get('namespace')}/{meta['name']} in the cluster"

    def apply(self, manifest: dict[str, Any], text: str, *, keep_comments: bool = False) -> bool:
        try:
            return self.cluster.apply(manifest)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        try:
            return self.cluster.delete(kind, namespace, name)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None

    def manifest(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.cluster.manifest(kind, namespace, name)
        except ClusterError as exc:
            raise InstallError(str(exc)) from None

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "server": self.cluster.server,
            "namespace": self.namespace,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
