"""OrchStore against an in-test API server (`tests/support/kube_api.py`), which stands in for
the real orchestrator API server: none can run on these machines. It speaks the real wire
protocol (lists with resourceVersions, chunked watch streams, 410 Gone, status patches)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from gw import api as api_models
from gw.api import ResourceKey
from gw.api.status import State, Status
from gw.controlplane import ControlPlane
from gw.orch.client import connect
from gw.orch.kinds import WatchedKind
from gw.orch.store import OrchStore
from gw.snapshot import Snapshot
from gw.xds.cache import SnapshotCache
from tests.support.kube_api import FakeKubeApi
from tests.support.wait import eventually

NS = "gw-system"
VS_KEY = ResourceKey("VirtualService", "default", "web")


def vs(name: str = "web", domains: list[str] | None = None, **options: Any) -> dict[str, Any]:
    route: dict[str, Any] = {
        "matchers": [{"prefix": "/"}],
        "routeAction": {"single": {"upstream": {"name": "echo", "namespace": NS}}},
    }
    if options:
        route["options"] = options
    return {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"virtualHost": {"domains": domains or [f"{name}.example.com"], "routes": [route]}},
    }


def upstream(name: str = "echo", port: int = 9000) -> dict[str, Any]:
    return {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Upstream",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": port}]}},
    }


def service(name: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"ports": [{"name": "http", "port": 80}], "selector": {"app": name}},
    }


@pytest.fixture
def api() -> Iterator[FakeKubeApi]:
    with FakeKubeApi() as server:
        yield server


class Follower:
    """Consumes `store.watch()` in the background, keeping the latest snapshot."""

    def __init__(self, store: OrchStore) -> None:
        self.store = store
        self.latest: Snapshot | None = None
        self.count = 0
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for snapshot in self.store.watch():
            self.latest = snapshot
            self.count += 1

    def has(self, key: ResourceKey) -> bool:
        return self.latest is not None and key in self.latest.resources

    def lacks(self, key: ResourceKey) -> bool:
        return self.latest is not None and key not in self.latest.resources

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


@pytest.fixture
async def store(api: FakeKubeApi, tmp_path: Path) -> AsyncIterator[OrchStore]:
    client = connect(api.kubeconfig(tmp_path / "kubeconfig"))
    store = OrchStore(client, namespace=NS)
    store.BACKOFF_MIN = 0.05
    yield store
    await client.close()


async def test_first_snapshot_holds_everything_listed(api: FakeKubeApi, store: OrchStore) -> None:
    api.apply(vs())
    api.apply(upstream())
    api.apply(service("petstore"))
    api.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "tls", "namespace": NS},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": "", "tls.key": ""},
        }
    )
    follower = Follower(store)
    try:
        snapshot = await eventually(lambda: follower.latest, what="the first snapshot")
        assert follower.count == 1
        assert set(snapshot.resources) == {
            VS_KEY,
            ResourceKey("Upstream", NS, "echo"),
            ResourceKey("Service", "default", "petstore"),
            ResourceKey("Secret", NS, "tls"),
        }
        parsed = snapshot.resources[VS_KEY]
        assert parsed.metadata.resource_version is not None
        assert snapshot.errors == ()
        # one list per kind, then watches from the list's resourceVersion
        assert api.count("GET", "/apis/gateway.vendor.io/v1/virtualservices") >= 2
        await eventually(
            lambda: any("watch=true" in q and "resourceVersion=" in q for _, _, q in api.requests),
            what="watches from the list's resourceVersion",
        )
    finally:
        await follower.stop()


async def test_watch_adds_modifies_and_deletes(api: FakeKubeApi, store: OrchStore) -> None:
    follower = Follower(store)
    try:
        await eventually(lambda: follower.latest, what="the first snapshot")
        api.apply(vs(domains=["a.example.com"]))
        await eventually(lambda: follower.has(VS_KEY), what="the added VirtualService")
        api.apply(vs(domains=["b.example.com"]))

        def domains() -> list[str]:
            assert follower.latest is not None
            found = follower.latest.resources[VS_KEY]
            host = found.spec.virtual_host  # type: ignore[attr-defined]
            return list(host.domains)

        await eventually(lambda: domains() == ["b.example.com"], what="the modified domains")
        api.delete("gateway.vendor.io/v1", "VirtualService", "default", "web")
        await eventually(lambda: follower.lacks(VS_KEY), what="the deletion")
    finally:
        await follower.stop()


@pytest.mark.parametrize("expired_as_http", [False, True], ids=["error-event", "http-410"])
async def test_expired_watch_lists_again(
    api: FakeKubeApi, store: OrchStore, expired_as_http: bool
) -> None:
    """While the store is cut off, history is compacted: its watch from the old version is
    answered 410 Gone, and it lists again (deletions it never saw as events included)."""
    api.expired_as_http = expired_as_http
    api.apply(vs())
    follower = Follower(store)
    try:
        await eventually(lambda: follower.has(VS_KEY), what="the first snapshot")
        api.unavailable = True
        api.drop_watches()
        api.delete("gateway.vendor.io/v1", "VirtualService", "default", "web")
        api.apply(vs("other"))
        api.compact()
        api.unavailable = False
        other = ResourceKey("VirtualService", "default", "other")
        await eventually(lambda: follower.lacks(VS_KEY) and follower.has(other), what="the resync")
        assert store.relists >= 1
    finally:
        await follower.stop()


async def test_reconnects_after_the_connection_drops(api: FakeKubeApi, store: OrchStore) -> None:
    follower = Follower(store)
    try:
        await eventually(lambda: follower.latest, what="the first snapshot")
        watches = len(store.kinds)  # one watch per kind, cluster-wide
        await eventually(lambda: api.watch_count() == watches, what="every watch open")
        api.unavailable = True  # the server restarts: refused for a while
        api.drop_watches()
        await eventually(lambda: store.reconnects >= len(store.kinds), what="failed retries")
        api.apply(vs())  # happens while the store is cut off
        api.unavailable = False
        await eventually(lambda: follower.has(VS_KEY), what="the change made while away")
        await eventually(lambda: api.watch_count() == watches, what="every watch back")
        assert store.relists == 0  # resumed from the version it had, no full list
    finally:
        await follower.stop()


async def test_a_reflector_that_fails_unexpectedly_ends_the_watch(
    api: FakeKubeApi, tmp_path: Path
) -> None:
    """Failures of the cluster are retried for ever; anything else is a bug, and a store whose
    reflector stopped must not go on as if it followed the cluster: the watch raises, naming
    the reflector. (A kind whose resource type the client cannot use stands in for the bug.)"""
    client = connect(api.kubeconfig(tmp_path / "kubeconfig"))
    broken = WatchedKind(api_models.Secret, resource=object(), custom=False)
    store = OrchStore(client, namespace=NS, kinds=[broken])

    async def first_snapshot() -> Snapshot:
        async for snapshot in store.watch():
            return snapshot
        raise AssertionError("the watch ended without a snapshot")

    try:
        with pytest.raises(RuntimeError, match="orch: watch secrets \\* stopped") as failure:
            await asyncio.wait_for(first_snapshot(), timeout=10)
        assert isinstance(failure.value.__cause__, TypeError)  # not an error of the cluster
    finally:
        await client.close()


async def test_a_status_only_change_makes_no_new_snapshot(
    api: FakeKubeApi, store: OrchStore
) -> None:
    stored = api.apply(vs())
    follower = Follower(store)
    try:
        first = await eventually(lambda: follower.latest, what="the first snapshot")
        api.write_status(stored, {"statuses": {"other-ns": {"state": "Accepted"}}})
        await eventually(
            lambda: (
                store.observed(VS_KEY)
                and store.observed(VS_KEY).resource_version  # type: ignore[union-attr]
                != stored["metadata"]["resourceVersion"]
            ),
            what="the status change",
        )
        assert follower.latest is first and follower.count == 1
    finally:
        await follower.stop()


async def test_status_is_written_only_when_it_changed(api: FakeKubeApi, store: OrchStore) -> None:
    stored = api.apply(vs())
    api.write_status(stored, {"statuses": {"other-ns": {"state": "Rejected", "reason": "x"}}})
    follower = Follower(store)
    try:
        await eventually(lambda: follower.has(VS_KEY), what="the first snapshot")
        warning = Status(state=State.WARNING, reason="warning: \n  x", subresource_statuses={})
        store.statuses.write({VS_KEY: warning})

        def stored_status() -> dict[str, Any]:
            found = api.get("gateway.vendor.io/v1", "VirtualService", "default", "web")
            return found.get("status", {}) if found else {}

        await eventually(lambda: NS in stored_status().get("statuses", {}), what="the status")
        assert stored_status()["statuses"][NS] == {
            "state": "Warning",
            "reason": "warning: \n  x",
            "reportedBy": "gw",
            "subresourceStatuses": {},
            "messages": [],
        }
        # another controller's entry is left alone
        assert stored_status()["statuses"]["other-ns"]["state"] == "Rejected"
        patches = api.count("PATCH", "/virtualservices/web/status")
        assert patches == 1

        store.statuses.write({VS_KEY: warning})  # the same again: nothing to write
        store.writer.mark_all()
        accepted = Status(
            state=State.ACCEPTED,
            subresource_statuses={"*v1.Proxy.gateway-proxy_gw-system": Status(state="Accepted")},
        )
        store.statuses.write({VS_KEY: accepted})
        await eventually(
            lambda: stored_status()["statuses"][NS]["state"] == "Accepted", what="the update"
        )
        assert api.count("PATCH", "/virtualservices/web/status") == patches + 1
        entry = stored_status()["statuses"][NS]
        assert entry["reason"] == ""
        assert entry["subresourceStatuses"] == {
            "*v1.Proxy.gateway-proxy_gw-system": {
                "state": "Accepted",
                "reason": "",
                "reportedBy": "gw",
                "subresourceStatuses": {},
                "messages": [],
            }
        }
        # the write's own watch event does not trigger another write
        await asyncio.sleep(0.2)
        assert api.count("PATCH", "/virtualservices/web/status") == patches + 1
    finally:
        await follower.stop()


async def test_a_status_is_not_written_by_a_follower(api: FakeKubeApi, tmp_path: Path) -> None:
    leading = False
    client = connect(api.kubeconfig(tmp_path / "kubeconfig"))
    store = OrchStore(client, namespace=NS, is_leader=lambda: leading)
    api.apply(vs())
    follower = Follower(store)
    try:
        await eventually(lambda: follower.has(VS_KEY), what="the first snapshot")
        store.statuses.write({VS_KEY: Status(state=State.ACCEPTED)})
        await asyncio.sleep(0.2)
        assert api.count("PATCH", "/status") == 0
        leading = True
        store.writer.mark_all()  # what the leader elector calls on winning
        await eventually(lambda: api.count("PATCH", "/status") == 1, what="the leader's write")
    finally:
        await follower.stop()
        await client.close()


async def test_a_status_waits_for_the_translation_of_a_newer_spec(
    api: FakeKubeApi, store: OrchStore
) -> None:
    api.apply(vs())
    follower = Follower(store)
    try:
        first = await eventually(lambda: follower.has(VS_KEY) and follower.latest)
        store.writer.translated = lambda: first
        api.apply(vs(domains=["new.example.com"]))  # generation 2, not yet translated
        await eventually(lambda: store.observed(VS_KEY).generation == 2)  # type: ignore[union-attr]
        store.statuses.write({VS_KEY: Status(state=State.REJECTED, reason="old")})
        await asyncio.sleep(0.2)
        assert api.count("PATCH", "/status") == 0
        second = await eventually(lambda: follower.latest is not first and follower.latest)
        store.writer.translated = lambda: second
        store.statuses.write({VS_KEY: Status(state=State.REJECTED, reason="old")})
        await eventually(lambda: api.count("PATCH", "/status") == 1, what="the write")
    finally:
        await follower.stop()


async def test_invalid_resource_is_rejected_and_its_last_version_keeps_serving(
    api: FakeKubeApi, store: OrchStore
) -> None:
    """A manifest the cluster holds that gw cannot accept is an input error with its key: the
    control plane reports it Rejected (on the object) and serves its last accepted version."""
    api.apply(upstream())
    api.apply(vs())
    plane = ControlPlane(store, SnapshotCache())
    store.writer.translated = lambda: plane.snapshot
    runner = asyncio.create_task(plane.run())

    def state() -> str | None:
        found = api.get("gateway.vendor.io/v1", "VirtualService", "default", "web") or {}
        entry = found.get("status", {}).get("statuses", {}).get(NS)
        return entry["state"] if entry else None

    try:
        await eventually(lambda: state() == "Accepted", what="Accepted on the object")
        api.apply(vs(timeout="soon"))  # not a duration: gw's validation refuses it
        await eventually(lambda: state() == "Rejected", what="Rejected on the object")
        found = api.get("gateway.vendor.io/v1", "VirtualService", "default", "web")
        assert found is not None
        entry = found["status"]["statuses"][NS]
        assert "spec.virtualHost.routes[0].options.timeout" in entry["reason"]
        assert entry["messages"] == ["its last accepted configuration is still being served"]
        assert plane.result is not None
        proxy = plane.result.proxy
        served = [d for li in proxy.listeners for vh in li.virtual_hosts for d in vh.domains]
        assert "web.example.com" in served
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


async def test_watch_namespaces_limit_what_is_read(api: FakeKubeApi, tmp_path: Path) -> None:
    client = connect(api.kubeconfig(tmp_path / "kubeconfig"))
    store = OrchStore(client, namespace=NS, watch_namespaces=["team-a"])
    api.apply(service("seen", "team-a"))
    api.apply(service("hidden", "team-b"))
    api.apply(upstream())
    follower = Follower(store)
    try:
        snapshot = await eventually(lambda: follower.latest, what="the first snapshot")
        assert ResourceKey("Service", "team-a", "seen") in snapshot.resources
        assert ResourceKey("Upstream", NS, "echo") in snapshot.resources  # its own namespace
        assert ResourceKey("Service", "team-b", "hidden") not in snapshot.resources
        assert api.count("GET", "/api/v1/services") == 0  # no cluster-wide list
    finally:
        await follower.stop()
        await client.close()


def test_entry_patch_turns_the_stored_entry_into_the_computed_one() -> None:
    from gw.orch.status import entry_patch

    observed = {
        "state": "Rejected",
        "reason": "x",
        "details": {"a": 1},
        "subresourceStatuses": {"old": {"state": "Accepted"}, "kept": {"state": "Rejected"}},
    }
    desired = {
        "state": "Accepted",
        "reason": "",
        "subresourceStatuses": {"kept": {"state": "Accepted"}},
    }
    assert entry_patch(observed, desired) == {
        "details": None,
        "state": "Accepted",
        "reason": "",
        "subresourceStatuses": {"old": None, "kept": {"state": "Accepted"}},
    }
    assert entry_patch(None, desired) == desired


async def test_replicas_share_one_webhook_certificate(api: FakeKubeApi, tmp_path: Path) -> None:
    from cryptography import x509

    from gw.orch.webhook import ensure_certificate, publish_ca_bundle

    clients = [connect(api.kubeconfig(tmp_path / f"kubeconfig-{i}")) for i in range(2)]
    try:
        assert not await publish_ca_bundle(clients[0], "x")  # no configuration: nothing to do
        api.apply(
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": "gw-validation"},
                "webhooks": [
                    {
                        "name": "gw.gw-system.svc",
                        "clientConfig": {"service": {"name": "gw", "namespace": NS}},
                        "sideEffects": "None",
                        "admissionReviewVersions": ["v1"],
                    }
                ],
            }
        )
        first, second = await asyncio.gather(*(ensure_certificate(c, NS) for c in clients))
        assert first == second
        assert api.count("POST", "/secrets") in (1, 2)  # a lost race reads the winner's
        cert = x509.load_pem_x509_certificate(first.cert_pem.encode())
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert "gw.gw-system.svc" in names.get_values_for_type(x509.DNSName)
        ca = x509.load_pem_x509_certificate(first.ca_pem.encode())
        cert.verify_directly_issued_by(ca)
        assert await publish_ca_bundle(clients[1], first.ca_pem)
        stored = api.get(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            None,
            "gw-validation",
        )
        assert stored is not None
        import base64

        assert (
            base64.b64decode(stored["webhooks"][0]["clientConfig"]["caBundle"]).decode()
            == first.ca_pem
        )
        puts = api.count("PUT", "/validatingwebhookconfigurations")
        assert await publish_ca_bundle(clients[0], first.ca_pem)  # already current: no write
        assert api.count("PUT", "/validatingwebhookconfigurations") == puts
    finally:
        for client in clients:
            await client.close()
