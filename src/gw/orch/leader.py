"""Leader election with a `coordination.k8s.io/v1` Lease, so that of several control-plane
replicas exactly one writes statuses (all of them serve xDS).

The algorithm is client-go's: the holder renews the Lease every `retry` seconds; another
replica takes it over only when it has seen the same record, unrenewed, for a whole
`lease_duration` by its own clock (so clocks need not agree). Every write carries the
Lease's `resourceVersion`, so of two replicas racing for it one gets `409 Conflict` and stays
a follower. A leader that cannot renew within `renew_deadline` (shorter than
`lease_duration`) stops leading before anyone else may start. On shutdown the leader hands
the Lease back (empty holder) so a follower takes over at once.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from lightkube import AsyncClient
from lightkube.models.coordination_v1 import LeaseSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.coordination_v1 import Lease

from gw.orch.client import API_ERRORS, status_code

log = logging.getLogger(__name__)

LEASE_NAME = "gw-controlplane"


def default_identity() -> str:
    """The pod name (its host name) and a random suffix: a restarted pod is a new holder."""
    return f"{os.environ.get('POD_NAME') or socket.gethostname()}_{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class Timing:
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry: float = 2.0

    @classmethod
    def scaled(cls, lease_duration: float) -> Timing:
        """client-go's proportions (15 s, 10 s, 2 s) for another lease duration."""
        return cls(lease_duration, lease_duration * 2 / 3, lease_duration * 2 / 15)


class LeaderElector:
    def __init__(
        self,
        client: AsyncClient,
        namespace: str,
        *,
        name: str = LEASE_NAME,
        identity: str | None = None,
        timing: Timing = Timing(),
        on_start_leading: Callable[[], None] = lambda: None,
    ) -> None:
        if not timing.retry < timing.renew_deadline < timing.lease_duration:
            raise ValueError("leader election needs retry < renew deadline < lease duration")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.timing = timing
        self.on_start_leading = on_start_leading
        self.leading = False
        self.transitions = 0
        self._renewed_at = 0.0
        self._seen: tuple[str | None, str | None] | None = None
        self._seen_at = 0.0

    def is_leader(self) -> bool:
        """Leading, and renewed recently enough that nobody else can have taken over."""
        return self.leading and time.monotonic() - self._renewed_at < self.timing.renew_deadline

    async def run(self) -> None:
        try:
            while True:
                await self._round()
                await asyncio.sleep(self.timing.retry)
        finally:
            if self.leading:
                await asyncio.shield(self.release())

    async def _round(self) -> None:
        try:
            held = await self._acquire_or_renew()
        except API_ERRORS as exc:  # try again next round
            log.warning("leader election: cannot reach the Lease %s: %s", self.name, exc)
            held = False
        now = time.monotonic()
        if held:
            self._renewed_at = now
            if not self.leading:
                self.leading = True
                self.transitions += 1
                log.info("leader election: %s leads (Lease %s)", self.identity, self.name)
                self.on_start_leading()
        elif self.leading and not self.is_leader():
            self.leading = False
            log.warning("leader election: %s lost the Lease %s", self.identity, self.name)

    async def _acquire_or_renew(self) -> bool:
        try:
            lease = await self.client.get(Lease, self.name, namespace=self.namespace)
        except API_ERRORS as exc:
            if status_code(exc) != 404:
                raise
            return await self._create()
        spec = lease.spec or LeaseSpec()
        holder = spec.holderIdentity or None
        if holder not in (None, self.identity):
            self.leading = False
            record = (holder, lease.metadata.resourceVersion if lease.metadata else None)
            if record != self._seen:
                self._seen, self._seen_at = record, time.monotonic()
            duration = spec.leaseDurationSeconds or self.timing.lease_duration
            if time.monotonic() - self._seen_at < duration:
                return False
            log.info("leader election: %s stopped renewing; taking over", holder)
        now = _now()
        if holder != self.identity:
            spec.acquireTime = now
            spec.leaseTransitions = (spec.leaseTransitions or 0) + 1
        spec.holderIdentity = self.identity
        spec.renewTime = now
        spec.leaseDurationSeconds = int(self.timing.lease_duration)
        lease.spec = spec
        return await self._replace(lease)

    async def _create(self) -> bool:
        now = _now()
        lease = Lease(
            metadata=ObjectMeta(name=self.name, namespace=self.namespace),
            spec=LeaseSpec(
                holderIdentity=self.identity,
                leaseDurationSeconds=int(self.timing.lease_duration),
                acquireTime=now,
                renewTime=now,
                leaseTransitions=0,
            ),
        )
        try:
            await self.client.create(lease)
        except API_ERRORS as exc:
            if status_code(exc) == 409:
                log.debug("leader election: another replica created the Lease %s", self.name)
                return False
            raise
        return True

    async def _replace(self, lease: Lease) -> bool:
        try:
            await self.client.replace(lease)
        except API_ERRORS as exc:
            if status_code(exc) == 409:
                log.debug("leader election: the Lease %s changed since it was read", self.name)
                return False  # someone else renewed or took it
            raise
        return True

    async def release(self) -> None:
        """Give the Lease up (the next leader need not wait for it to expire)."""
        self.leading = False
        try:
            lease = await self.client.get(Lease, self.name, namespace=self.namespace)
            if lease.spec is None or lease.spec.holderIdentity != self.identity:
                return
            lease.spec.holderIdentity = ""
            lease.spec.leaseDurationSeconds = 1
            await self.client.replace(lease)
            log.info("leader election: %s released the Lease %s", self.identity, self.name)
        except API_ERRORS as exc:  # shutting down: it expires anyway
            log.warning("leader election: cannot release the Lease %s: %s", self.name, exc)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)
