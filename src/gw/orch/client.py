"""Clients for the cluster's API server: `connect()` gives the control plane's (asynchronous,
for watching); `ClusterClient` is what `gwctl` asks of a cluster, synchronously: objects, the
control plane's admin API through the API server's service proxy, pod logs, creating
resources, and port-forwards.

The service proxy (`/api/v1/namespaces/<ns>/services/<name>:<port>/proxy/<path>`) reaches the
control plane's debug server (9091) with nothing to set up. Envoy's admin interface listens
on the pod's loopback only and gRPC (xDS) does not pass the service proxy: those go through
`kubectl port-forward`, as with the established tool.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
from lightkube import ApiError, AsyncClient, Client, ConfigError, KubeConfig
from lightkube.config.client_adapter import Client as HttpClient
from lightkube.config.client_adapter import ConnectionParams
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import Pod, Secret, Service

from gw.api import kind_for
from gw.orch.kinds import BY_KIND

_FORWARDING = re.compile(r"Forwarding from 127\.0\.0\.1:(\d+)")


#: What a call to the API server raises when the call fails: an error answer (lightkube's
#: `ApiError`, or an HTTP error status without a `Status` body), no answer (the connection
#: failed, broke or timed out: the transport errors of httpx2, lightkube's HTTP library), or
#: credentials that could not be made (a kubeconfig's token file or `exec` plugin failing:
#: `ConfigError`). Anything else raised from a call is a bug in gw, not a failure of the cluster.
API_ERRORS: tuple[type[Exception], ...] = (httpx2.HTTPError, ConfigError)


def status_code(exc: BaseException) -> int | None:
    """The HTTP status an API call failed with (an `ERROR` watch event's code included);
    None when the server gave no answer."""
    if isinstance(exc, ApiError):
        code = exc.status.code
        return int(code) if code is not None else None
    if isinstance(exc, httpx2.HTTPStatusError):
        return exc.response.status_code
    return None


def connect(kubeconfig: Path | None = None, context: str | None = None) -> AsyncClient:
    """A client for the cluster: from `kubeconfig`, else in-cluster (the pod's service
    account), else `$KUBECONFIG` or `~/.kube/config`."""
    if kubeconfig is not None:
        config = KubeConfig.from_file(kubeconfig)
    else:
        config = KubeConfig.from_env()
    return AsyncClient(config=config.get(context), field_manager="gw", trust_env=False)


class ClusterError(Exception):
    """The cluster answered with an error, or could not be reached."""


class ClusterClient:
    def __init__(self, kubeconfig: Path | None = None, context: str | None = None) -> None:
        config = KubeConfig.from_file(kubeconfig) if kubeconfig else KubeConfig.from_env()
        self.kubeconfig = kubeconfig
        self.context = context
        single = config.get(context)
        if single is None:
            raise ClusterError(f"the kubeconfig has no context {context or '(current)'}")
        self.config = single
        self.server = self.config.cluster.server
        self.client = Client(config=self.config, field_manager="gwctl", trust_env=False)
        self._http = HttpClient(self.config, ConnectionParams(trust_env=False))

    def service_proxy(self, namespace: str, service: str, port: int, path: str) -> Any:
        """GET `path` of a service port through the API server; the response."""
        url = f"/api/v1/namespaces/{namespace}/services/{service}:{port}/proxy/{path.lstrip('/')}"
        try:
            return self._http.get(url)
        except API_ERRORS as exc:
            raise ClusterError(f"cannot reach {self.server}: {exc}") from None

    def service(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._get(Service, namespace, name)

    def deployments(self, namespace: str) -> list[dict[str, Any]]:
        return [d.to_dict() for d in self._list(Deployment, namespace)]

    def pods(self, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
        return [p.to_dict() for p in self._list(Pod, namespace, labels)]

    def log_lines(self, namespace: str, pod: str, *, follow: bool = False) -> Iterator[str]:
        try:
            yield from self.client.log(pod, namespace=namespace, follow=follow, newlines=False)
        except API_ERRORS as exc:
            raise ClusterError(f"cannot read the log of pod {namespace}/{pod}: {exc}") from None

    def create(self, manifest: dict[str, Any]) -> None:
        """Create a gw resource or a Secret; an existing one is an error."""
        resource: Any = _resource_class(str(manifest.get("kind"))).from_dict(manifest)
        try:
            self.client.create(resource)
        except API_ERRORS as exc:
            if status_code(exc) == 409:
                meta = manifest["metadata"]
                raise ClusterError(
                    f"{manifest['kind']} {meta.get('namespace')}.{meta['name']} already exists"
                ) from None
            raise ClusterError(f"cannot create {manifest['kind']}: {exc}") from None

    def apply(self, manifest: dict[str, Any]) -> bool:
        """Server-side apply of a gw resource or a Secret, gwctl owning the fields it sets
        (conflicts with other managers are forced, as `kubectl apply --server-side
        --force-conflicts`); True when it created the object."""
        kind = _resource_class(str(manifest.get("kind")))
        meta = manifest.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        existed = self._get(kind, namespace, str(meta.get("name"))) is not None
        resource: Any = kind.from_dict({**manifest, "metadata": {**meta, "namespace": namespace}})
        try:
            self.client.apply(resource, field_manager="gwctl", force=True)
        except API_ERRORS as exc:
            raise ClusterError(f"cannot apply {manifest.get('kind')}: {_reason(exc)}") from None
        return not existed

    def delete(self, kind_name: str, namespace: str, name: str) -> bool:
        """Delete a gw resource or a Secret; False when there was none."""
        kind = _resource_class(kind_name)
        try:
            self.client.delete(kind, name, namespace=namespace)
        except API_ERRORS as exc:
            if status_code(exc) == 404:
                return False
            raise ClusterError(f"cannot delete {kind_name} {namespace}.{name}: {exc}") from None
        return True

    def manifest(self, kind_name: str, namespace: str, name: str) -> dict[str, Any] | None:
        """A gw resource or Secret as its owner wrote it: without its status and the
        metadata the server keeps (versions, managed fields, timestamps)."""
        found = self._get(_resource_class(kind_name), namespace, name)
        if found is None:
            return None
        meta = found.get("metadata") or {}
        kept = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if meta.get(k)}
        out = {k: v for k, v in found.items() if k not in ("status", "metadata")}
        return {**out, "metadata": kept}

    @contextlib.contextmanager
    def port_forward(self, namespace: str, target: str, port: int) -> Iterator[int]:
        """`kubectl port-forward -n <namespace> <target> :<port>` while open; the local port."""
        command = ["kubectl", "port-forward", "-n", namespace, target, f":{port}"]
        if self.kubeconfig is not None:
            command += ["--kubeconfig", str(self.kubeconfig)]
        if self.context is not None:
            command += ["--context", self.context]
        try:
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        except FileNotFoundError:
            raise ClusterError("kubectl is needed for this command (port-forward)") from None
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            found = _FORWARDING.search(line)
            if found is None:
                error = process.stderr.read() if process.stderr else ""
                raise ClusterError(f"kubectl port-forward {target} {port} failed: {line}{error}")
            yield int(found.group(1))
        finally:
            process.terminate()
            process.wait(5)

    def _get(self, kind: Any, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            found = self.client.get(kind, name, namespace=namespace)
        except API_ERRORS as exc:
            if status_code(exc) == 404:
                return None
            raise ClusterError(f"cannot read {name} in {namespace}: {exc}") from None
        data: dict[str, Any] = found.to_dict()
        return data

    def _list(self, kind: Any, namespace: str, labels: dict[str, str] | None = None) -> list[Any]:
        try:
            selector: Any = dict(labels) if labels else None
            return list(self.client.list(kind, namespace=namespace, labels=selector))
        except API_ERRORS as exc:
            raise ClusterError(f"cannot list {kind.__name__} in {namespace}: {exc}") from None


def _resource_class(kind_name: str) -> Any:
    """The client's class for a kind gwctl writes: gw's custom resources and Secrets."""
    model = kind_for(kind_name)
    if model is None or model.KIND not in BY_KIND:
        raise ClusterError(f"gwctl does not write {kind_name} objects")
    return Secret if model.KIND == "Secret" else BY_KIND[model.KIND].resource


def _reason(exc: Exception) -> str:
    """An API error's message (a validation webhook's denial says what is wrong)."""
    if isinstance(exc, ApiError) and exc.status.message:
        return str(exc.status.message)
    return str(exc)
