"""The proxies page: each Proxy the control plane built, with its status; every xDS client
connected (Envoys, and gw's own extauth and rate-limit servers) with, per resource type, the
version last sent and whether the client acknowledged it (ACK), refused it (NACK, with
Envoy's message: it keeps its previous configuration) or has not answered yet; the last
translation; and, under `gw up`, the processes of the install.

Read from the admin API's data (`proxies_data`, `proxy_resources_data`, `/components`,
`/tasks`), the same `gwctl check` reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gw.api.status import Status
from gw.translator import ir

StatusOf = Callable[[ir.Proxy], Status | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class TypeVersion:
    type: str
    sent: str
    acked: str
    #: `ACK`, `NACK`, `waiting` (sent, not answered yet), `requested` (nothing sent yet).
    state: str
    message: str = ""
    apply_ms: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Client:
    node: str
    role: str
    peer: str
    connected_for: str
    types: tuple[TypeVersion, ...]

    @property
    def state(self) -> str:
        """The worst of its types: NACK, then waiting, then ACK."""
        states = {t.state for t in self.types}
        for worst in ("NACK", "waiting", "requested"):
            if worst in states:
                return worst
        return "ACK"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyRow:
    name: str
    namespace: str
    state: str
    reason: str
    messages: tuple[str, ...]
    listeners: tuple[str, ...]


def clients(connections: Sequence[Mapping[str, Any]], now: float | None = None) -> list[Client]:
    """The connected xDS clients, by role and node."""
    now = time.time() if now is None else now
    out = []
    for c in connections:
        types = tuple(_type_version(name, state) for name, state in sorted(c["types"].items()))
        out.append(
            Client(
                node=c["node"],
                role=c["role"],
                peer=c["peer"],
                connected_for=duration(now - float(c["connectedAt"])),
                types=types,
            )
        )
    return sorted(out, key=lambda c: (c.role, c.node))


def _type_version(name: str, state: Mapping[str, Any]) -> TypeVersion:
    sent, acked = state.get("sent", ""), state.get("acked", "")
    nack = state.get("nack")
    if nack:
        verdict, message = "NACK", f"version {nack['version']}: {nack['message']}"
    elif not sent:
        verdict, message = "requested", ""
    elif acked == sent:
        verdict, message = "ACK", ""
    else:
        verdict, message = "waiting", ""
    return TypeVersion(
        type=name.rsplit(".", 1)[-1],
        sent=sent,
        acked=acked,
        state=verdict,
        message=message,
        apply_ms=state.get("applyMs"),
    )


def proxy_rows(proxies: Sequence[ir.Proxy], status_of: StatusOf) -> list[ProxyRow]:
    """Each Proxy with its status (its Envoys' NACKs included), as `gwctl get proxy`."""
    rows = []
    for proxy in proxies:
        status = status_of(proxy)
        rows.append(
            ProxyRow(
                name=proxy.name,
                namespace=proxy.namespace,
                state=status.state.value if status else "Pending",
                reason=status.reason if status else "",
                messages=tuple(status.messages) if status else (),
                listeners=tuple(f"{lis.name} {lis.address}:{lis.port}" for lis in proxy.listeners),
            )
        )
    return rows


def duration(seconds: float) -> str:
    """`42s`, `3m`, `5h`, `2d`."""
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"
