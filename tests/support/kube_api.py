"""An in-test orchestrator (Kubernetes) API server, on a free loopback port.

It stands in for the real API server, which cannot run on these machines. It speaks the real
wire protocol for what gw uses, over plain HTTP:

- list: `GET /api/v1/...` and `GET /apis/<group>/<version>/...`, cluster-wide or in one
  namespace, with `metadata.resourceVersion` on the list, `limit`/`continue` paging, and list
  items without `apiVersion`/`kind` (as the real server sends them);
- watch: `?watch=1` answers a chunked stream of newline-delimited JSON events (`ADDED`,
  `MODIFIED`, `DELETED`, `ERROR`); from a `resourceVersion` it replays what happened since,
  without one it starts with an `ADDED` per object; `timeoutSeconds` ends the stream
  cleanly. A resourceVersion older than the last compaction is `410 Gone`: an `ERROR` event
  carrying a `Status` (the watch cache's answer) or, with `expired_as_http`, an HTTP 410;
- get, create (409 `AlreadyExists`), update (409 `Conflict` on a stale resourceVersion),
  JSON merge patch (a `metadata.resourceVersion` in the patch is a precondition), server-side
  apply (as a lone field manager: managed fields are not modelled) and delete;
  for custom resources the `status` subresource: writes to the object ignore `status` and
  bump `generation` when anything else changes; writes to `/status` change only `status`;
- `coordination.k8s.io/v1` Leases, `apps/v1` Deployments, core Services, Endpoints, Pods,
  Secrets, `ValidatingWebhookConfiguration`s (cluster-scoped), and the custom resources of
  `gw crds`;
- the service and pod proxy (`/api/v1/namespaces/<ns>/services/<name>:<port>/proxy/...`),
  forwarded to loopback addresses the test registers, and pod logs.

It does not authenticate, prune unknown fields or check objects against the CRD schemas (the
CRD tests check the schemas themselves). Tests change objects directly (`apply`, `delete`),
drop every watch connection (`drop_watches`), compact the history (`compact`) or answer 503
to everything (`unavailable`), and read the requests it served (`requests`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from gw.api.crd import CRD_KINDS, group_of, version_of
from gw.asgi import EmbeddedServer
from tests.support.ports import free_port
from tests.support.wait import wait_until

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Kind:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    status_subresource: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


KINDS = (
    Kind("", "v1", "services", "Service"),
    Kind("", "v1", "endpoints", "Endpoints"),
    Kind("", "v1", "pods", "Pod"),
    Kind("", "v1", "configmaps", "ConfigMap"),
    Kind("", "v1", "secrets", "Secret"),
    Kind("", "v1", "namespaces", "Namespace", namespaced=False),
    Kind("apps", "v1", "deployments", "Deployment"),
    Kind("coordination.k8s.io", "v1", "leases", "Lease"),
    Kind(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        namespaced=False,
    ),
    *(
        Kind(group_of(k), version_of(k), k.PLURAL, k.KIND, status_subresource=True)
        for k in CRD_KINDS
    ),
)


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message

    def response(self) -> JSONResponse:
        return JSONResponse(status_object(self.code, self.reason, self.message), self.code)


def status_object(code: int, reason: str, message: str) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


@dataclass(slots=True)
class _Event:
    rv: int
    type: str
    kind: Kind
    obj: Obj


@dataclass(slots=True, eq=False)
class _Watcher:
    kind: Kind
    namespace: str | None
    queue: asyncio.Queue[_Event | None]
    loop: asyncio.AbstractEventLoop


@dataclass(slots=True)
class _Target:
    """Where a request goes: a kind, maybe a namespace, a name, a subresource."""

    kind: Kind
    namespace: str | None = None
    name: str | None = None
    sub: str | None = None
    rest: str = ""


@dataclass(slots=True)
class FakeKubeApi:
    """See the module docstring. Use as a context manager or call `start()`/`stop()`."""

    expired_as_http: bool = False
    unavailable: bool = False
    port: int = field(default_factory=free_port)
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    backends: dict[tuple[str, str, str], str] = field(default_factory=dict)
    pod_logs: dict[tuple[str, str], str] = field(default_factory=dict)
    _objects: dict[Kind, dict[tuple[str, str], Obj]] = field(default_factory=dict)
    _events: list[_Event] = field(default_factory=list)
    _rv: int = 1
    _floor: int = 0
    _watchers: set[_Watcher] = field(default_factory=set)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _server: EmbeddedServer | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeKubeApi:
        import uvicorn

        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=_METHODS)])
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="critical",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = EmbeddedServer(config)
        server = self._server
        self._thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
        self._thread.start()
        wait_until(lambda: server.started, timeout=10, what="the fake API server")
        return self

    def stop(self) -> None:
        self.drop_watches()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> FakeKubeApi:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def kubeconfig(self, path: Path, namespace: str = "gw-system") -> Path:
        """A kubeconfig file that points at this server."""
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                    "users": [{"name": "fake", "user": {}}],
                    "contexts": [
                        {
                            "name": "fake",
                            "context": {"cluster": "fake", "user": "fake", "namespace": namespace},
                        }
                    ],
                    "current-context": "fake",
                }
            )
        )
        return path

    # --- direct access for tests ---------------------------------------------------------

    def apply(self, obj: Obj) -> Obj:
        """Create or replace an object as a client would (status kept only through
        `write_status`); returns the stored copy."""
        kind = self._kind_of(obj)
        meta = obj["metadata"]
        with self._lock:
            existing = self._store(kind).get((meta.get("namespace", ""), meta["name"]))
        if existing is None:
            return self._create(kind, meta.get("namespace"), copy.deepcopy(obj))
        body = copy.deepcopy(obj)
        body["metadata"].pop("resourceVersion", None)
        return self._update(kind, meta.get("namespace"), meta["name"], body)

    def delete(self, api_version: str, kind: str, namespace: str | None, name: str) -> None:
        self._delete(self._kind_named(api_version, kind), namespace, name)

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Obj | None:
        with self._lock:
            found = self._store(self._kind_named(api_version, kind)).get((namespace or "", name))
            return copy.deepcopy(found) if found else None

    def write_status(self, obj: Obj, status: Obj) -> Obj:
        """Set an object's status as another controller would."""
        meta = obj["metadata"]
        return self._patch(
            self._kind_of(obj), meta.get("namespace"), meta["name"], {"status": status}, "status"
        )

    def compact(self) -> None:
        """Forget the history: watches from any resourceVersion seen so far get 410 Gone."""
        with self._lock:
            self._events.clear()
            self._floor = self._rv

    def drop_watches(self) -> None:
        """Cut every open watch connection without ending its stream (a restart)."""
        with self._lock:
            watchers, self._watchers = set(self._watchers), set()
        for watcher in watchers:
            watcher.loop.call_soon_threadsafe(watcher.queue.put_nowait, None)

    def watch_count(self) -> int:
        with self._lock:
            return len(self._watchers)

    def count(self, method: str, path_part: str) -> int:
        """How many `method` requests went to a path containing `path_part`."""
        return sum(1 for m, p, _ in list(self.requests) if m == method and path_part in p)

    # --- storage -------------------------------------------------------------------------

    def _store(self, kind: Kind) -> dict[tuple[str, str], Obj]:
        return self._objects.setdefault(kind, {})

    def _kind_of(self, obj: Obj) -> Kind:
        return self._kind_named(obj["apiVersion"], obj["kind"])

    def _kind_named(self, api_version: str, kind: str) -> Kind:
        for k in KINDS:
            if k.api_version == api_version and k.kind == kind:
                return k
        raise ValueError(f"the fake API server does not serve {api_version} {kind}")

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _emit(self, kind: Kind, type_: str, obj: Obj, rv: int) -> None:
        event = _Event(rv, type_, kind, copy.deepcopy(obj))
        self._events.append(event)
        ns = obj["metadata"].get("namespace")
        for watcher in list(self._watchers):
            if watcher.kind == kind and watcher.namespace in (None, ns):
                watcher.loop.call_soon_threadsafe(watcher.queue.put_nowait, event)

    def _create(self, kind: Kind, namespace: str | None, body: Obj) -> Obj:
        meta = body.setdefault("metadata", {})
        if kind.namespaced:
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        key = (meta.get("namespace", ""), meta.get("name", ""))
        with self._lock:
            store = self._store(kind)
            if key in store:
                raise ApiError(409, "AlreadyExists", f'{kind.plural} "{key[1]}" already exists')
            rv = self._next_rv()
            body["apiVersion"], body["kind"] = kind.api_version, kind.kind
            meta.update(
                resourceVersion=str(rv),
                uid=str(uuid.uuid4()),
                creationTimestamp=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                generation=1,
            )
            if kind.status_subresource:
                body.pop("status", None)
            store[key] = body
            self._emit(kind, "ADDED", body, rv)
            return copy.deepcopy(body)

    def _existing(self, kind: Kind, namespace: str | None, name: str) -> Obj:
        found = self._store(kind).get((namespace or "", name))
        if found is None:
            raise ApiError(404, "NotFound", f'{kind.plural} "{name}" not found')
        return found

    def _commit(self, kind: Kind, old: Obj, new: Obj, precondition: str | None) -> Obj:
        meta = old["metadata"]
        if precondition and precondition != meta["resourceVersion"]:
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {kind.plural} "{meta["name"]}": the object '
                "has been modified; please apply your changes to the latest version and try again",
            )
        for fixed in ("uid", "creationTimestamp", "namespace", "name", "generation"):
            if fixed in meta:
                new["metadata"][fixed] = meta[fixed]
        if _spec_of(new) != _spec_of(old):
            new["metadata"]["generation"] = meta.get("generation", 1) + 1
        rv = self._next_rv()
        new["metadata"]["resourceVersion"] = str(rv)
        new["apiVersion"], new["kind"] = kind.api_version, kind.kind
        self._store(kind)[(meta.get("namespace", ""), meta["name"])] = new
        self._emit(kind, "MODIFIED", new, rv)
        return copy.deepcopy(new)

    def _update(self, kind: Kind, namespace: str | None, name: str, body: Obj) -> Obj:
        with self._lock:
            old = self._existing(kind, namespace, name)
            precondition = body.get("metadata", {}).get("resourceVersion")
            new = copy.deepcopy(body)
            if kind.status_subresource:
                new.pop("status", None)
                if "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
            return self._commit(kind, old, new, precondition)

    def _patch(
        self, kind: Kind, namespace: str | None, name: str, patch: Obj, sub: str | None
    ) -> Obj:
        with self._lock:
            old = self._existing(kind, namespace, name)
            precondition = (patch.get("metadata") or {}).get("resourceVersion")
            if sub == "status":
                new = copy.deepcopy(old)
                if "status" in patch:
                    new["status"] = merge_patch(old.get("status"), patch["status"])
            else:
                new = merge_patch(old, patch)
                if kind.status_subresource:
                    new.pop("status", None)
                    if "status" in old:
                        new["status"] = copy.deepcopy(old["status"])
            return self._commit(kind, old, new, precondition)

    def _server_side_apply(self, kind: Kind, namespace: str | None, name: str, body: Obj) -> Obj:
        """Server-side apply as a lone field manager sees it: the object is created, or its
        fields (all but `status`; labels and annotations of the metadata) become the
        applied ones. Field ownership across managers is not modelled."""
        with self._lock:
            old = self._store(kind).get((namespace or "", name))
        if old is None:
            return self._create(kind, namespace, copy.deepcopy(body))
        with self._lock:
            new = {k: copy.deepcopy(v) for k, v in body.items() if k not in ("metadata", "status")}
            new["metadata"] = copy.deepcopy(old["metadata"])
            for field in ("labels", "annotations"):
                new["metadata"].pop(field, None)
                if body.get("metadata", {}).get(field):
                    new["metadata"][field] = copy.deepcopy(body["metadata"][field])
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            return self._commit(kind, old, new, None)

    def _delete(self, kind: Kind, namespace: str | None, name: str) -> Obj:
        with self._lock:
            old = self._existing(kind, namespace, name)
            del self._store(kind)[(namespace or "", name)]
            rv = self._next_rv()
            gone = copy.deepcopy(old)
            gone["metadata"]["resourceVersion"] = str(rv)
            self._emit(kind, "DELETED", gone, rv)
            return gone

    # --- HTTP ----------------------------------------------------------------------------

    async def _handle(self, request: Request) -> Response:
        path = request.url.path
        self.requests.append((request.method, path, request.url.query))
        if self.unavailable:
            return ApiError(503, "ServiceUnavailable", "the server is shutting down").response()
        try:
            target = self._target(path)
            if target.sub == "proxy":
                return await self._proxy(request, target)
            if target.sub == "log":
                return self._log(target)
            return await self._dispatch(request, target)
        except ApiError as exc:
            return exc.response()

    def _target(self, path: str) -> _Target:
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError(404, "NotFound", f"the server could not find {path}")
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest:
            raise ApiError(404, "NotFound", f"the server could not find {path}")
        kind = next(
            (k for k in KINDS if (k.group, k.version, k.plural) == (group, version, rest[0])),
            None,
        )
        if kind is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return _Target(
            kind,
            namespace,
            rest[1] if len(rest) > 1 else None,
            rest[2] if len(rest) > 2 else None,
            # A trailing slash is kept, as the real service proxy keeps it.
            "/".join(rest[3:]) + ("/" if path.endswith("/") and len(rest) > 3 else ""),
        )

    async def _dispatch(self, request: Request, t: _Target) -> Response:
        method = request.method
        if t.name is None:
            if method == "GET" and request.query_params.get("watch") in ("1", "true"):
                return self._watch(request, t)
            if method == "GET":
                return JSONResponse(self._list(request, t))
            if method == "POST":
                return JSONResponse(self._create(t.kind, t.namespace, await request.json()), 201)
        elif method == "GET" and t.sub is None:
            with self._lock:
                return JSONResponse(copy.deepcopy(self._existing(t.kind, t.namespace, t.name)))
        elif method == "PUT":
            return JSONResponse(self._update(t.kind, t.namespace, t.name, await request.json()))
        elif method == "PATCH":
            if request.headers.get("content-type") == "application/apply-patch+yaml":
                body = yaml.safe_load(await request.body())
                return JSONResponse(self._server_side_apply(t.kind, t.namespace, t.name, body))
            if request.headers.get("content-type") != "application/merge-patch+json":
                raise ApiError(415, "UnsupportedMediaType", "only merge patches are served")
            return JSONResponse(
                self._patch(t.kind, t.namespace, t.name, await request.json(), t.sub)
            )
        elif method == "DELETE":
            return JSONResponse(self._delete(t.kind, t.namespace, t.name))
        raise ApiError(405, "MethodNotAllowed", f"{method} is not supported here")

    def _list(self, request: Request, t: _Target) -> Obj:
        with self._lock:
            items = [
                copy.deepcopy(o)
                for (ns, _), o in sorted(self._store(t.kind).items())
                if t.namespace in (None, ns)
            ]
            rv = self._rv
        offset = int(request.query_params.get("continue") or 0)
        limit = int(request.query_params.get("limit") or 0) or len(items)
        page = items[offset : offset + limit]
        meta: Obj = {"resourceVersion": str(rv)}
        if offset + limit < len(items):
            meta["continue"] = str(offset + limit)
            meta["remainingItemCount"] = len(items) - offset - limit
        for item in page:  # list items carry no apiVersion/kind, as the real server's
            item.pop("apiVersion", None)
            item.pop("kind", None)
        return {
            "apiVersion": t.kind.api_version,
            "kind": f"{t.kind.kind}List",
            "metadata": meta,
            "items": page,
        }

    def _watch(self, request: Request, t: _Target) -> Response:
        since = request.query_params.get("resourceVersion") or "0"
        timeout = float(request.query_params.get("timeoutSeconds") or 0) or None
        loop = asyncio.get_running_loop()
        watcher = _Watcher(t.kind, t.namespace, asyncio.Queue(), loop)
        first: list[Obj] = []
        with self._lock:
            if since != "0" and int(since) < self._floor:
                message = f"too old resource version: {since} ({self._floor})"
                if self.expired_as_http:
                    raise ApiError(410, "Expired", message)
                first.append({"type": "ERROR", "object": status_object(410, "Expired", message)})
            elif since == "0":
                for (ns, _), obj in sorted(self._store(t.kind).items()):
                    if t.namespace in (None, ns):
                        first.append({"type": "ADDED", "object": copy.deepcopy(obj)})
                self._watchers.add(watcher)
            else:
                for event in self._events:
                    ns = event.obj["metadata"].get("namespace")
                    if event.kind == t.kind and event.rv > int(since):
                        if t.namespace in (None, ns):
                            first.append({"type": event.type, "object": event.obj})
                self._watchers.add(watcher)
        expired = bool(first) and first[0]["type"] == "ERROR"
        return StreamingResponse(
            self._stream(watcher, first, None if expired else timeout, expired),
            media_type="application/json",
        )

    async def _stream(
        self, watcher: _Watcher, first: list[Obj], timeout: float | None, expired: bool
    ) -> AsyncIterator[bytes]:
        try:
            for event in first:
                yield (json.dumps(event) + "\n").encode()
            if expired:
                return
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return  # the server's timeout: a clean end of the stream
                try:
                    event = await asyncio.wait_for(watcher.queue.get(), left)
                except TimeoutError:
                    return
                if event is None:
                    raise ConnectionAbortedError("watch dropped by the test")
                yield (json.dumps({"type": event.type, "object": event.obj}) + "\n").encode()
        finally:
            with self._lock:
                self._watchers.discard(watcher)

    async def _proxy(self, request: Request, t: _Target) -> Response:
        name, _, port = (t.name or "").partition(":")
        base = self.backends.get((t.namespace or "", name, port))
        if base is None:
            raise ApiError(503, "ServiceUnavailable", f"no endpoints available for {name}")
        async with httpx.AsyncClient(timeout=10) as client:
            answer = await client.request(
                request.method,
                f"{base}/{t.rest}",
                params=request.query_params,
                content=await request.body(),
                headers={"content-type": request.headers.get("content-type", "")},
            )
        return Response(
            answer.content,
            answer.status_code,
            media_type=answer.headers.get("content-type"),
        )

    def _log(self, t: _Target) -> Response:
        text = self.pod_logs.get((t.namespace or "", t.name or ""))
        if text is None:
            raise ApiError(404, "NotFound", f'pods "{t.name}" not found')
        return Response(text, media_type="text/plain")


_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _spec_of(obj: Obj) -> Obj:
    """What `generation` counts changes of: everything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}
