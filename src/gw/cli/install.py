"""Where everything of an installation is, and how gwctl reaches it.

`Install` is the one interface the commands use; each kind of installation implements it:

- `FolderInstall`: `gw up DIR` on this machine. Each `gw up` is an instance with a state
  directory of its own (`gw.instance`); its state file says where the proxy, the control
  plane's admin server and the Envoy admin listen, and where the logs are. gwctl works on the
  instance named with `--instance` (or `GW_INSTANCE`), else the one serving the current
  folder, else the only one running. `--admin-url` (or `GW_ADMIN_URL`) points gwctl at a
  control plane directly.
- `OrchInstall` (`orch_install.py`): an orchestrator install, reached through the API server
  (the admin API over its service proxy, logs, objects) and `kubectl port-forward` (Envoy's
  admin on 19000, xDS on 9977); see docs/kubernetes.md. Chosen by `GW_INSTALL=orch`, or
  when no `gw up` runs here and a kubeconfig is there.

Commands never read state files or build URLs themselves.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from gw import defaults

CONTROLLER_NAMESPACE = defaults.NAMESPACE
PROXY_NAME = defaults.PROXY_NAME


class InstallError(Exception):
    """gwctl cannot reach or understand the installation; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Component:
    """A deployment of the installation (control plane, proxy, extauth ...)."""

    name: str
    namespace: str
    role: str
    #: Answers its health check (the deployment is available).
    available: bool
    #: Its process is running (the pod is up).
    running: bool
    restarts: int = 0
    detail: str = ""


class LogSource(ABC):
    """The log of one component."""

    name: str

    @abstractmethod
    def lines(self) -> Iterator[str]:
        """Every line so far."""

    @abstractmethod
    def follow(self, poll: float = 0.1) -> Iterator[str]:
        """Every line so far, then new lines as they are written (until interrupted)."""


class FileLog(LogSource):
    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path

    def lines(self) -> Iterator[str]:
        try:
            with self.path.open(encoding="utf-8", errors="replace") as file:
                yield from (line.rstrip("\n") for line in file)
        except FileNotFoundError:
            return

    def follow(self, poll: float = 0.1) -> Iterator[str]:
        with self.path.open(encoding="utf-8", errors="replace") as file:
            pending = ""
            while True:
                chunk = file.readline()
                if not chunk:
                    time.sleep(poll)
                    continue
                pending += chunk
                if pending.endswith("\n"):
                    yield pending.rstrip("\n")
                    pending = ""


class Install(ABC):
    """An installation of gw, as gwctl sees it."""

    #: `folder` or `orchestrator`: shown by `gwctl version` and `debug yaml`.
    kind: str

    @abstractmethod
    def admin(self, path: str) -> Any:
        """GET a control-plane admin endpoint and unwrap its envelope."""

    @abstractmethod
    def proxy_url(self, name: str, namespace: str, port: str) -> str:
        """URL of a proxy's listener for the port named `port` (`http` or `https`)."""

    @abstractmethod
    def proxy_admin(self, name: str, namespace: str) -> contextlib.AbstractContextManager[str]:
        """Base URL of a proxy's admin interface (port 19000), reachable while open."""

    @abstractmethod
    def xds_address(self) -> contextlib.AbstractContextManager[str]:
        """`host:port` of the control plane's xDS server, reachable while open."""

    @abstractmethod
    def components(self) -> list[Component]:
        """Every deployment of the install and its state."""

    @abstractmethod
    def logs(self) -> list[LogSource]:
        """The logs of every component."""

    @abstractmethod
    def proxy_log(self, name: str, namespace: str) -> LogSource:
        """The log of one proxy deployment."""

    @abstractmethod
    def write_manifest(self, manifest: dict[str, Any], text: str) -> str:
        """Store a new resource (`text` is its YAML); returns where it went."""

    @abstractmethod
    def apply(self, manifest: dict[str, Any], text: str, *, keep_comments: bool = False) -> bool:
        """Create or replace a resource (`text` is its YAML document); True when created.
        `keep_comments`: a folder document keeps its leading comments when `text` has none
        (for commands that change part of a resource)."""

    @abstractmethod
    def delete(self, kind: str, namespace: str, name: str) -> bool:
        """Delete a resource; False when there was none."""

    @abstractmethod
    def manifest(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """A resource's manifest as stored (secret values and all, no defaults filled in),
        for commands that change part of it; None when there is none."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What and where the install is (for `debug yaml`), with no secret in it."""

    def server_version(self) -> str:
        return str(self.admin("/version")["version"])

    def manifest_folder(self) -> Path | None:
        """The folder the control plane reads manifests from, when gwctl can read it too."""
        return None

    @functools.cached_property
    def http(self) -> httpx.Client:
        """One HTTP client for every call of a command (setting one up costs ~0.1 s).
        Certificates are verified whenever the control plane is reached over HTTPS."""
        return httpx.Client(timeout=10, verify=self.verify_tls)

    #: Whether HTTPS certificates are checked (plain-HTTP loopback installs skip loading
    #: the CA bundle).
    verify_tls: bool = True


class FolderInstall(Install):
    """`gw up DIR` on this machine."""

    kind = "folder"

    def __init__(self, admin_url: str, state: dict[str, Any] | None, state_path: Path) -> None:
        self.admin_url = admin_url.rstrip("/")
        self.verify_tls = self.admin_url.startswith("https:")
        self.state = state or {}
        self.state_path = state_path

    def admin(self, path: str) -> Any:
        url = self.admin_url + path
        try:
            response = self.http.get(url)
        except httpx.HTTPError as exc:
            raise InstallError(
                f"cannot reach the gw control plane at {self.admin_url} ({exc}); "
                "is `gw up` running?"
            ) from None
        try:
            body = response.json()
        except ValueError:
            raise InstallError(f"{url} answered {response.status_code} with no JSON") from None
        if not isinstance(body, dict):
            raise InstallError(f"{url} did not answer with the admin envelope")
        if body.get("error"):
            raise InstallError(f"{url}: {body['error']}")
        return body.get("data")

    def _need(self, field: str, what: str) -> str:
        value = self.state.get(field)
        if not value:
            raise InstallError(
                f"the {what} is unknown: gwctl reads it from {self.state_path}, which "
                "`gw up` writes while it runs"
            )
        return str(value)

    def _check_proxy(self, name: str, namespace: str) -> None:
        if (name, namespace) != (PROXY_NAME, CONTROLLER_NAMESPACE):
            raise InstallError(
                f"could not detect '{name}' service in {namespace} namespace. A folder "
                f"install runs one proxy, {PROXY_NAME} in {CONTROLLER_NAMESPACE}"
            )

    def proxy_url(self, name: str, namespace: str, port: str) -> str:
        self._check_proxy(name, namespace)
        if port == "http":
            return self._need("proxyUrl", "proxy URL")
        if port == "https":
            return self._need("proxyHttpsUrl", "proxy HTTPS URL")
        raise InstallError(f"named port {port} not found on service {name}")

    @contextlib.contextmanager
    def proxy_admin(self, name: str, namespace: str) -> Iterator[str]:
        self._check_proxy(name, namespace)
        yield self._need("proxyAdminUrl", "proxy admin address")

    @contextlib.contextmanager
    def xds_address(self) -> Iterator[str]:
        yield self._need("xdsAddress", "xDS address")

    def components(self) -> list[Component]:
        try:
            listed = self.admin("/components")
        except InstallError as exc:
            return [
                Component(
                    name="gw",
                    namespace=CONTROLLER_NAMESPACE,
                    role="control plane",
                    available=False,
                    running=_pid_alive(self.state.get("pid")),
                    detail=str(exc),
                )
            ]
        return [self._component(c) for c in listed]

    def _component(self, data: dict[str, Any]) -> Component:
        available, detail = True, ""
        health = data.get("healthUrl")
        if health:
            try:
                status = self.http.get(health, timeout=5).status_code
                available, detail = status == 200, f"{health} answered {status}"
            except httpx.HTTPError as exc:
                available, detail = False, f"no answer from {health} ({exc})"
        if available and data.get("redis"):  # the rate-limit server's: it counts there
            from gw.ratelimit.counter import redis_problem

            problem = redis_problem(data["redis"])
            available, detail = problem is None, problem or ""
        return Component(
            name=data["name"],
            namespace=data.get("namespace", CONTROLLER_NAMESPACE),
            role=data.get("role", ""),
            available=available,
            running=bool(data.get("running")),
            restarts=int(data.get("restarts") or 0),
            detail="" if available else detail,
        )

    def logs(self) -> list[LogSource]:
        paths = self.state.get("logs") or {}
        if not paths:
            raise InstallError(f"no log files listed in {self.state_path}; is `gw up` running?")
        return [FileLog(name, Path(path)) for name, path in sorted(paths.items())]

    def proxy_log(self, name: str, namespace: str) -> LogSource:
        self._check_proxy(name, namespace)
        for log in self.logs():
            if log.name == name:
                return log
        raise InstallError(f"no log file for {name} in {self.state_path}")

    def write_manifest(self, manifest: dict[str, Any], text: str) -> str:
        from gw.cli import served_folder

        folder = Path(self._need("folder", "served folder"))
        meta = manifest["metadata"]
        path = served_folder.new_file(folder, manifest["kind"], meta["namespace"], meta["name"])
        served_folder.write_atomically(path, text, private=manifest["kind"] == "Secret")
        return str(path)

    def apply(self, manifest: dict[str, Any], text: str, *, keep_comments: bool = False) -> bool:
        """Replace the document that holds the resource (or the one that failed to, when
        it is broken), or write a new file for a new resource."""
        from gw.cli import served_folder

        folder = Path(self._need("folder", "served folder"))
        meta = manifest["metadata"]
        key = (manifest["kind"], meta.get("namespace") or "default", meta["name"])
        where = self._location(key)
        private = manifest["kind"] == "Secret"
        try:
            if where is None:
                served_folder.put_document(
                    served_folder.new_file(folder, *key), None, text, private=private
                )
                return True
            path = folder / where[0]
            served_folder.check_document(path, where[1], key)
            served_folder.put_document(
                path, where[1], text, private=private, keep_comments=keep_comments
            )
        except (served_folder.EditError, OSError) as exc:
            raise InstallError(f"cannot write {key[0]} {key[1]}.{key[2]}: {exc}") from None
        return False

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        from gw.cli import served_folder

        folder = Path(self._need("folder", "served folder"))
        where = self._location((kind, namespace, name))
        if where is None:
            return False
        path = folder / where[0]
        try:
            served_folder.check_document(path, where[1], (kind, namespace, name))
            served_folder.remove_document(path, where[1])
        except (served_folder.EditError, OSError) as exc:
            raise InstallError(f"cannot delete {kind} {namespace}.{name}: {exc}") from None
        return True

    def manifest(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        from gw.cli import served_folder

        folder = Path(self._need("folder", "served folder"))
        key = (kind, namespace, name)
        where = self._location(key)
        if where is None:
            return None
        try:
            return served_folder.stored_document(folder / where[0], where[1], key)
        except (served_folder.EditError, OSError) as exc:
            raise InstallError(f"cannot read {kind} {namespace}.{name}: {exc}") from None

    def _location(self, key: tuple[str, str, str]) -> tuple[str, int] | None:
        """(file in the folder, document) holding the resource as the store read it: the
        accepted manifest, else the broken one that meant it."""
        statuses = self.admin("/statuses")
        rows = [i for i in statuses["inputs"] if (i["kind"], i["namespace"], i["name"]) == key]
        rows += [
            e
            for e in statuses["inputErrors"]
            if e.get("resource") and tuple(e["resource"].values()) == key
        ]
        for row in rows:
            if row.get("file") and row.get("document"):
                return str(row["file"]), int(row["document"])
        return None

    def manifest_folder(self) -> Path | None:
        folder = self.state.get("folder")
        return Path(folder) if folder else None

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "stateFile": str(self.state_path), **self.state}


def locate(
    home: Path,
    admin_url: str | None = None,
    instance: str | None = None,
    cwd: Path | None = None,
) -> Install:
    """The install gwctl talks to: `--admin-url` if given, else a running `gw up` (see the
    module's docstring for which), else the orchestrator's when a kubeconfig is there."""
    from gw.instance import InstanceError, select

    wanted = os.environ.get("GW_INSTALL", "").lower()
    orch = wanted in ("orch", "orchestrator")
    found = None
    if not orch:
        try:
            found = select(home, instance, cwd or Path.cwd())
        except InstanceError as exc:
            if admin_url is None:
                raise InstallError(str(exc)) from None
    state = found[1] if found else None
    state_path = found[0].state_file if found else home / "instances"
    if admin_url:
        # The state file describes the `gw up` it came from: only use it for that one.
        same = state is not None and state.get("adminUrl") == admin_url.rstrip("/")
        return FolderInstall(admin_url, state if same else None, state_path)
    if orch or (state is None and wanted != "folder"):
        from gw.cli.orch_install import OrchInstall, cluster_configured

        if wanted or cluster_configured():
            return OrchInstall(namespace=os.environ.get("GW_NAMESPACE") or CONTROLLER_NAMESPACE)
    if state is None:
        raise InstallError(
            f"no gw installation found: no `gw up` is running (none in {home / 'instances'}). "
            "Start one with `gw up DIR`, or point gwctl at a control plane with --admin-url"
        )
    return FolderInstall(state["adminUrl"], state, state_path)


def _pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
