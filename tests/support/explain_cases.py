"""Golden cases made runnable for the `gwctl explain` e2e test, and the comparison of a
prediction with what Envoy did.

`rewrite()` changes a case's manifests only where the test machine needs it: every upstream
host (a `gcp` one's too) becomes one of the test's echo servers on loopback (or the
rate-limit server, or a key set server, for the upstreams Settings and JWT providers name),
orchestrator addresses become loopback, Gateways listen on free loopback ports, JWT
providers' local keys become the test's public key (only keys gw accepts: a broken key stays
broken), and every virtual host adds `x-gw-route: %ROUTE_NAME%` and
`x-gw-cluster: %UPSTREAM_CLUSTER%` to its responses, which is how Envoy says which route and
cluster it chose (also on its own 503 `no healthy upstream`). Nothing that decides matching,
filters or statuses is touched.

Upstreams whose endpoints are host names on the internet (an AWS Lambda region's endpoint)
cannot be pointed at loopback without changing what is tested, and cannot be reached from
here: Envoy's 503 `no healthy upstream` (the name does not resolve) is then accepted for a
predicted forward, but only when Envoy names the predicted route and a predicted cluster
whose every endpoint is such a name (`not_reachable_here`). (A 503 `upstream connect error`,
Envoy reaching an endpoint that does not answer, is accepted for any forward.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from gw.explain.endpoints import NO_HEALTHY_UPSTREAM
from gw.explain.explanation import Destination, Explanation, upstream_failed
from gw.explain.headers import TEMPLATE_FAILED
from gw.explain.tcp import PASSTHROUGH
from gw.translator.gateway.upstreams import is_ip

ROUTE_HEADER = "x-gw-route"
CLUSTER_HEADER = "x-gw-cluster"


@dataclass
class Rewrite:
    echo_ports: list[int]
    ratelimit_port: int
    jwks_port: int
    public_pem: str
    free_port: Callable[[], int]
    #: Original Gateway port → the free port it got.
    ports: dict[int, int] = field(default_factory=dict)

    def port(self, original: int) -> int:
        if original not in self.ports:
            self.ports[original] = self.free_port()
        return self.ports[original]


def rewrite(text: str, rw: Rewrite) -> str:
    """The case as this machine can serve it (a case that is not YAML stays as it is)."""
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return text
    refs = references(docs)
    special = {key: rw.ratelimit_port for key in refs["ratelimit"]}
    special.update({key: rw.jwks_port for key in refs["jwks"]})
    echo = 0
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        kind = doc.get("kind")
        meta = doc.get("metadata") or {}
        spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
        if kind == "Upstream":
            key = (meta.get("namespace", "default"), meta.get("name"))
            port = special.get(key) or rw.echo_ports[echo % len(rw.echo_ports)]
            echo += key not in special
            for host in (spec.get("static") or {}).get("hosts") or []:
                if isinstance(host, dict):
                    host["addr"] = "127.0.0.1" if is_ip(str(host.get("addr"))) else "localhost"
                    host["port"] = port
            if isinstance(spec.get("gcp"), dict) and spec["gcp"].get("host"):
                spec["gcp"]["host"] = f"localhost:{port}"  # a service that resolves here
        elif kind in ("Endpoints", "Pod", "Service"):
            _loopback(doc, rw.echo_ports[0])
        elif kind == "Gateway":
            if isinstance(spec.get("bindPort"), int):
                spec["bindPort"] = rw.port(spec["bindPort"])
            spec["bindAddress"] = "127.0.0.1"
        elif kind == "VirtualService" and isinstance(spec.get("virtualHost"), dict):
            options = spec["virtualHost"].setdefault("options", {})
            if isinstance(options, dict):
                manipulation = options.setdefault("headerManipulation", {})
                added = manipulation.setdefault("responseHeadersToAdd", [])
                added.append({"header": {"key": ROUTE_HEADER, "value": "%ROUTE_NAME%"}})
                added.append({"header": {"key": CLUSTER_HEADER, "value": "%UPSTREAM_CLUSTER%"}})
        _replace_local_keys(doc, rw.public_pem)
    return yaml.safe_dump_all(docs, sort_keys=False)


def _loopback(doc: dict[str, Any], port: int) -> None:
    for subset in doc.get("subsets") or []:
        for address in subset.get("addresses") or []:
            address["ip"] = "127.0.0.1"
        for entry in subset.get("ports") or []:
            entry["port"] = port
    status = doc.get("status")
    if isinstance(status, dict) and "podIP" in status:
        status["podIP"] = "127.0.0.1"
        status.pop("podIPs", None)
    spec = doc.get("spec") or {}
    for entry in spec.get("ports") or []:
        if isinstance(entry.get("targetPort"), int):
            entry["targetPort"] = port
    for container in spec.get("containers") or []:
        for entry in container.get("ports") or []:
            entry["containerPort"] = port


def _walk(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from _walk(value)
    elif isinstance(data, list):
        for value in data:
            yield from _walk(value)


def _replace_local_keys(doc: Any, pem: str) -> None:
    from gw.translator.gateway.jwks import JwksError, local_jwks

    for node in _walk(doc):
        local = node.get("local") if isinstance(node.get("local"), dict) else None
        if local is None or not isinstance(local.get("key"), str):
            continue
        try:
            local_jwks(local["key"])
        except JwksError:
            continue  # a key gw refuses stays refused
        local["key"] = pem


def references(docs: list[Any]) -> dict[str, set[tuple[str, str]]]:
    """The upstreams the rate-limit server and remote key sets are reached through."""
    out: dict[str, set[tuple[str, str]]] = {"ratelimit": set(), "jwks": set()}
    for doc in docs:
        for node in _walk(doc):
            ref = node.get("ratelimitServerRef")
            if isinstance(ref, dict):
                out["ratelimit"].add((ref.get("namespace", "default"), ref.get("name")))
            remote = node.get("remote")
            if isinstance(remote, dict) and isinstance(remote.get("upstreamRef"), dict):
                up = remote["upstreamRef"]
                out["jwks"].add((up.get("namespace", "default"), up.get("name")))
    return out


@dataclass(frozen=True)
class Seen:
    """What Envoy did with a request."""

    status: int | None
    headers: dict[str, str]
    body: str
    error: str = ""


def compare(explanation: Explanation, seen: Seen, echo_names: dict[int, str]) -> list[str]:
    """How Envoy's handling differs from the prediction (empty: it does not)."""
    outcome = explanation.outcome
    chosen = seen.headers.get(ROUTE_HEADER)
    predicted = explanation.route.name if explanation.route else None
    problems = []
    if chosen is not None and chosen != predicted:
        problems.append(f"route: predicted {predicted}, Envoy chose {chosen}")
    if outcome.action == "extauth" or outcome.by == PASSTHROUGH:
        return problems  # the extauth server (the upstream's TLS) decides: nothing to compare
    if outcome.action == "close":
        if not seen.error:
            problems.append(f"predicted a closed connection, got {seen.status}")
        return problems
    if explanation.asks_a_processor():
        return problems  # an external processor explain does not run may change or answer it
    if seen.error:
        return [*problems, f"predicted {outcome.summary()}, got no answer: {seen.error}"]
    if explanation.may_answer(seen.status, seen.body):
        return problems  # a fault (or CSRF) that only a share of requests get
    templated = seen.status == 400 and seen.body.startswith(TEMPLATE_FAILED)
    if templated and any(f.verdict.endswith("template cannot render") for f in explanation.filters):
        return problems  # a template explain does not run could not render
    limited = seen.status == 429 and any(
        "limit" in f.verdict or "bucket" in f.verdict
        for f in explanation.filters
        if f.kind.endswith("ratelimit")
    )
    if limited:
        return problems  # counters explain cannot see reached a limit
    if outcome.action == "forward":
        return problems + _forward_problems(explanation, seen, echo_names)
    if seen.status != outcome.status:
        problems.append(
            f"predicted {outcome.summary()}, Envoy answered {seen.status} {seen.body!r}"
        )
    elif outcome.body and seen.body != outcome.body:
        problems.append(f"predicted body {outcome.body!r}, got {seen.body!r}")
    location = dict(outcome.headers).get("location")
    if location is not None and seen.headers.get("location") != location:
        problems.append(f"predicted location {location}, got {seen.headers.get('location')}")
    if outcome.by.startswith("route") and chosen is None:
        problems.append("Envoy did not say which route it chose")
    cluster = seen.headers.get(CLUSTER_HEADER)
    if outcome.by == "router" and cluster and cluster not in _clusters(outcome.destinations):
        problems.append(
            f"Envoy chose cluster {cluster}, predicted {_clusters(outcome.destinations)}"
        )
    return problems


def _forward_problems(
    explanation: Explanation, seen: Seen, echo_names: dict[int, str]
) -> list[str]:
    outcome = explanation.outcome
    problems = []
    cluster = seen.headers.get(CLUSTER_HEADER)
    destination = next((d for d in outcome.destinations if d.cluster == cluster), None)
    if cluster and destination is None:
        problems.append(
            f"Envoy chose cluster {cluster}, predicted {_clusters(outcome.destinations)}"
        )
    # Through a TCP proxy the upstream's own answer comes back, without Envoy's headers.
    upstream = "x-envoy-upstream-service-time" in seen.headers or outcome.by == "tcp proxy"
    upstream |= explanation.request.startswith("CONNECT ") and seen.status == 200  # tunnel
    failed = upstream_failed(seen.status, seen.body)
    # A weighted route may pick a cluster explain says has nothing to pick from.
    empty = (
        seen.status == 503
        and seen.body == NO_HEALTHY_UPSTREAM
        and destination is not None
        and destination.note.endswith(NO_HEALTHY_UPSTREAM)
    )
    if not (upstream or failed or empty or not_reachable_here(explanation, seen)):
        problems.append(f"predicted a forward, Envoy answered {seen.status} {seen.body!r}")
    if (
        seen.headers.get(ROUTE_HEADER) is None
        and explanation.route
        and (upstream or failed or empty)
    ):
        problems.append("Envoy did not say which route it chose")
    answered = seen.headers.get("x-echo-name")
    allowed = {
        echo_names.get(int(e.rsplit(":", 1)[1]), e)
        for d in outcome.destinations
        for e in d.endpoints
    }
    if upstream and answered is not None and answered not in allowed:
        problems.append(f"answered by {answered}, predicted one of {sorted(allowed)}")
    return problems


def _clusters(destinations: tuple[Destination, ...]) -> list[str]:
    return sorted(d.cluster for d in destinations)


def not_reachable_here(explanation: Explanation, seen: Seen) -> bool:
    """Envoy answered a predicted forward with 503 `no healthy upstream` because the cluster
    it chose is a name that does not resolve here: true only when Envoy names the predicted
    route and a predicted DNS cluster whose every endpoint is a host name off this machine
    (not an IP address, not `localhost`), so a wrong route or cluster choice still fails."""
    route = explanation.route
    if explanation.outcome.action != "forward" or route is None:
        return False
    if seen.status != 503 or seen.body != NO_HEALTHY_UPSTREAM:
        return False
    if seen.headers.get(ROUTE_HEADER) != route.name:
        return False
    cluster = seen.headers.get(CLUSTER_HEADER)
    chosen = [d for d in explanation.outcome.destinations if d.cluster == cluster]
    return bool(chosen) and off_this_machine(chosen[0])


def off_this_machine(destination: Destination) -> bool:
    hosts = [e.rsplit(":", 1)[0] for e in destination.endpoints]
    return (
        destination.resolved_by_dns
        and bool(hosts)
        and not any(
            is_ip(h.strip("[]")) or h == "localhost" or h.endswith(".localhost") for h in hosts
        )
    )
