"""Leader election over a Lease, against the in-test API server (`tests/support/kube_api.py`),
which stands in for the real orchestrator API server: none can run on these machines."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from lightkube import AsyncClient

from gw.orch.client import connect
from gw.orch.leader import LEASE_NAME, LeaderElector, Timing
from tests.support.kube_api import FakeKubeApi
from tests.support.wait import eventually

NS = "gw-system"
FAST = Timing(lease_duration=1.0, renew_deadline=0.6, retry=0.1)


@pytest.fixture
def api() -> Iterator[FakeKubeApi]:
    with FakeKubeApi() as server:
        yield server


@pytest.fixture
async def client(api: FakeKubeApi, tmp_path: Path) -> AsyncIterator[AsyncClient]:
    client = connect(api.kubeconfig(tmp_path / "kubeconfig"))
    yield client
    await client.close()


def holder(api: FakeKubeApi) -> str | None:
    lease = api.get("coordination.k8s.io/v1", "Lease", NS, LEASE_NAME)
    return lease["spec"].get("holderIdentity") if lease else None


async def stop(*tasks: asyncio.Task[None]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_the_first_replica_creates_the_lease_and_leads(
    api: FakeKubeApi, client: AsyncClient
) -> None:
    won: list[str] = []
    a = LeaderElector(
        client, NS, identity="a", timing=FAST, on_start_leading=lambda: won.append("a")
    )
    task = asyncio.create_task(a.run())
    try:
        await eventually(a.is_leader, what="a to lead")
        assert holder(api) == "a" and won == ["a"]
        lease = api.get("coordination.k8s.io/v1", "Lease", NS, LEASE_NAME)
        assert lease is not None and lease["spec"]["leaseDurationSeconds"] == 1
        renewed = lease["spec"]["renewTime"]
        await eventually(
            lambda: (
                api.get("coordination.k8s.io/v1", "Lease", NS, LEASE_NAME)["spec"]["renewTime"]  # type: ignore[index]
                != renewed
            ),
            what="a renewal",
        )
    finally:
        await stop(task)


async def test_two_replicas_never_lead_together(api: FakeKubeApi, client: AsyncClient) -> None:
    a = LeaderElector(client, NS, identity="a", timing=FAST)
    b = LeaderElector(client, NS, identity="b", timing=FAST)
    tasks = [asyncio.create_task(a.run()), asyncio.create_task(b.run())]
    try:
        await eventually(lambda: a.is_leader() or b.is_leader(), what="a leader")
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            assert not (a.is_leader() and b.is_leader())
            assert a.is_leader() or b.is_leader()
            await asyncio.sleep(0.02)
        assert a.transitions + b.transitions == 1
    finally:
        await stop(*tasks)


async def test_a_follower_takes_over_when_the_leader_stops_renewing(
    api: FakeKubeApi, client: AsyncClient
) -> None:
    a = LeaderElector(client, NS, identity="a", timing=FAST)
    await a._round()  # a leads once, then stops renewing, as a hung or crashed replica would
    assert a.is_leader()
    b = LeaderElector(client, NS, identity="b", timing=FAST)
    task = asyncio.create_task(b.run())
    started = time.monotonic()
    try:
        await asyncio.sleep(0.3)
        assert not b.is_leader() and holder(api) == "a"
        await eventually(b.is_leader, timeout=5, what="b to take over")
        waited = time.monotonic() - started
        assert waited >= FAST.lease_duration  # only once the lease ran out
        assert not a.is_leader()  # a stopped leading on its own, before b could start
        assert holder(api) == "b"
        lease = api.get("coordination.k8s.io/v1", "Lease", NS, LEASE_NAME)
        assert lease is not None and lease["spec"]["leaseTransitions"] == 1
    finally:
        await stop(task)


async def test_a_stopping_leader_hands_the_lease_over_at_once(
    api: FakeKubeApi, client: AsyncClient
) -> None:
    slow = Timing(lease_duration=30.0, renew_deadline=20.0, retry=0.1)
    a = LeaderElector(client, NS, identity="a", timing=slow)
    b = LeaderElector(client, NS, identity="b", timing=slow)
    task_a = asyncio.create_task(a.run())
    await eventually(a.is_leader, what="a to lead")
    task_b = asyncio.create_task(b.run())
    try:
        await asyncio.sleep(0.3)
        assert not b.is_leader()
        await stop(task_a)  # shutdown releases the lease
        await eventually(b.is_leader, timeout=3, what="b to lead long before 30 s")
    finally:
        await stop(task_b)


def test_timing_must_leave_room_between_renewal_and_expiry() -> None:
    with pytest.raises(ValueError, match="retry < renew deadline < lease duration"):
        LeaderElector(None, NS, timing=Timing(lease_duration=5, renew_deadline=5, retry=1))  # type: ignore[arg-type]
