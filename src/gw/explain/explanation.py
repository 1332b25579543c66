"""The answer of `explain()`: plain frozen data, in the order a request meets things, with
`to_data()` for JSON/YAML and a one-line `Outcome.summary()` for people."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from gw.explain.served import Origin, RouteSource

Action = Literal["forward", "respond", "close", "extauth"]
#: How a filter's verdict starts when it answers only a share of requests (a fault, CSRF):
#: `may respond 503 fault filter abort (2.5% of requests)`.
CHANCE = "may respond"
#: How Envoy's answer starts when the upstream could not be reached.
_UPSTREAM_FAILURES = ("upstream connect error", "DNS resolution failure")


def upstream_failed(status: int | None, body: str) -> bool:
    """Envoy's own 503 for an upstream it could not connect to (or not resolve)."""
    return status == 503 and body.startswith(_UPSTREAM_FAILURES)


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteCheck:
    """One route of the virtual host against the request."""

    name: str
    matcher: str
    matched: bool
    #: Each condition and whether it held (`True`, `path prefix /a`).
    conditions: tuple[tuple[bool, str], ...]
    source: RouteSource | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterStep:
    """One HTTP filter of the chain, in order, and what it does with this request."""

    name: str
    #: What kind of filter (`jwt_authn`, `rbac`, `ext_authz` ...).
    kind: str
    summary: str
    details: tuple[str, ...] = ()
    #: False: the filter does not act on this route (off, or nothing configured for it).
    acts: bool = True
    #: What it decides: `passes`, `responds 401 Jwt is missing`, `asks the extauth server`.
    verdict: str = "passes"


@dataclass(frozen=True, slots=True, kw_only=True)
class Destination:
    cluster: str
    weight: int
    #: Share of requests, in percent.
    share: float
    #: What the load balancer picks from (the first priority that has endpoints).
    endpoints: tuple[str, ...]
    #: The endpoints of later priorities, used as the health of the ones before drops.
    failover: tuple[str, ...] = ()
    #: The endpoints are host names Envoy resolves (a DNS cluster): what they resolve to
    #: and whether they answer is not in the configuration.
    resolved_by_dns: bool = False
    #: The resource the cluster was made from (`Upstream gw-system.echo`).
    upstream: str | None = None
    #: Why Envoy cannot send to this cluster (empty: it can).
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    action: Action
    #: Who decides it: `route`, `no route`, `jwt_authn`, `rbac`, `router` ...
    by: str
    status: int | None = None
    body: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    destinations: tuple[Destination, ...] = ()
    #: The path and host the upstream sees (after rewrites).
    upstream_path: str | None = None
    upstream_host: str | None = None
    reason: str = ""

    def summary(self) -> str:
        if self.action == "forward":
            names = ", ".join(
                f"{d.cluster} ({d.share:g}%)" if len(self.destinations) > 1 else d.cluster
                for d in self.destinations
            )
            if self.by.startswith("tcp proxy"):  # no HTTP in Envoy: the bytes go as they are
                return f"proxied over TCP to {names}" + self.by.removeprefix("tcp proxy")
            return f"forwarded to {names}; the upstream answers"
        if self.action == "extauth":
            return f"the extauth server decides ({self.reason})"
        if self.action == "close":
            return f"connection closed: {self.reason}"
        body = f" {self.body}".rstrip("\n").replace("\n", "\\n") if self.body else ""
        return f"{self.status}{body}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    request: str
    #: The listener, filter chain and route configuration, one line each.
    connection: tuple[str, ...]
    path: str = ""
    path_changes: tuple[str, ...] = ()
    virtual_host: str | None = None
    virtual_host_why: str = ""
    virtual_host_source: Origin | None = None
    route: RouteCheck | None = None
    #: The routes before the winner, none of which matched (why each did not).
    earlier: tuple[RouteCheck, ...] = ()
    #: Routes after the winner that match too: the winner beat them (first match wins).
    shadowed: tuple[RouteCheck, ...] = ()
    filters: tuple[FilterStep, ...] = ()
    #: Request and response header changes of the route and virtual host.
    header_changes: tuple[str, ...] = ()
    outcome: Outcome
    notes: tuple[str, ...] = ()

    def asks_a_processor(self) -> bool:
        """An external processor sees the request: it may change it or answer it itself."""
        return any(f.kind == "ext_proc" and f.acts for f in self.filters)

    def may_answer(self, status: int | None, body: str) -> bool:
        """A filter answers a share of requests with exactly this status and body."""
        return any(f.verdict.startswith(f"{CHANCE} {status} {body} (") for f in self.filters)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = dataclasses.asdict(self)
        data["outcome"]["summary"] = self.outcome.summary()
        return data
