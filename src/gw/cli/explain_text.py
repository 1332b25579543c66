"""`gwctl explain` as text: one section per decision, in the order the request meets them,
and, with `--send`, what the proxy really answered next to the prediction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gw.explain.endpoints import DNS_NOTE, NO_HEALTHY_UPSTREAM
from gw.explain.explanation import upstream_failed

if TYPE_CHECKING:
    from gw.explain.explanation import Explanation, FilterStep, Outcome, RouteCheck
    from gw.explain.served import RouteSource
    from gw.probe import Sent


def render(explanation: Explanation, note: str, sent: Sent | None) -> str:
    lines = [f"Request       {explanation.request}"]
    if note:
        lines.append(f"              ({note})")
    for title, body in sections(explanation, sent)[1:]:
        lines += _section(title, body)
    return "\n".join(lines)


def sections(explanation: Explanation, sent: Sent | None) -> list[tuple[str, list[str]]]:
    """The explanation as titled sections of lines, in the order the request meets them:
    what `gwctl explain` prints, and what the console shows."""
    out: list[tuple[str, list[str]]] = [("Request", [explanation.request])]
    out.append(("Connection", list(explanation.connection)))
    if explanation.path:
        changes = f" ({'; '.join(explanation.path_changes)})" if explanation.path_changes else ""
        out.append(("Path", [f"{explanation.path}{changes}"]))
    if explanation.virtual_host_why:
        vhost = explanation.virtual_host or "none"
        source = explanation.virtual_host_source
        written = f", from {source}" if source is not None else ""
        out.append(("Virtual host", [f"{vhost}{written}", f"why: {explanation.virtual_host_why}"]))
    if explanation.route is not None:
        out.append(("Route", _route(explanation.route)))
    if explanation.earlier:
        title = "Not matching" if explanation.route else "No route matches"
        out.append((title, [line for c in explanation.earlier for line in _miss(c)]))
    if explanation.shadowed:
        beaten = [f"{c.name}: {c.matcher}{_where(c.source)}" for c in explanation.shadowed]
        out.append(("Also matching (never reached: the first match wins)", beaten))
    if explanation.filters:
        steps = [x for i, f in enumerate(explanation.filters) for x in _filter(i, f)]
        out.append(("Filters", steps))
    if explanation.header_changes:
        out.append(("Headers", list(explanation.header_changes)))
    out.append(("Outcome", _outcome(explanation.outcome)))
    out += [("Note", [n]) for n in explanation.notes]
    if sent is not None:
        different = difference(explanation, sent)
        verdict = "matches the prediction" if different is None else f"DIFFERS: {different}"
        out.append(("Sent", [*_sent(sent), verdict]))
    return [(title, body) for title, body in out if body]


def _section(title: str, body: list[str]) -> list[str]:
    if not body:
        return []
    head = f"{title:<13} " if len(title) <= 13 else f"{title}\n{'':14}"
    return [head + body[0], *(f"{'':14}{line}" for line in body[1:])]


def _where(source: RouteSource | None) -> str:
    return f" ({source.origin})" if source is not None else ""


def _route(route: RouteCheck) -> list[str]:
    lines = [f"{route.name}: {route.matcher}"]
    if route.source is not None:
        lines.append(f"written in {route.source.origin}")
        lines += [f"delegated by {step}" for step in route.source.delegated_by]
    return lines


def _miss(check: RouteCheck) -> list[str]:
    failed = [why for ok, why in check.conditions if not ok]
    return [f"{check.name}: {check.matcher}{_where(check.source)}", *(f"  ✗ {w}" for w in failed)]


def _filter(index: int, step: FilterStep) -> list[str]:
    named = "" if step.name.endswith(step.kind) else f" ({step.name})"
    head = f"{index + 1}. {step.kind}{named}: {step.summary}"
    if not step.acts:
        return [head]
    return [head, *(f"     {d}" for d in step.details), f"     → {step.verdict}"]


def _outcome(outcome: Outcome) -> list[str]:
    lines = [f"{outcome.summary()}  [{outcome.by}]" if outcome.by else outcome.summary()]
    lines += [f"{name}: {value}" for name, value in outcome.headers]
    for d in outcome.destinations:
        upstream = f" ({d.upstream})" if d.upstream else ""
        share = f", weight {d.weight} ({d.share:g}%)" if len(outcome.destinations) > 1 else ""
        endpoints = ", ".join(d.endpoints) or "no endpoints"
        lines.append(f"cluster {d.cluster}{upstream}{share}: {endpoints}")
        if d.failover:
            lines.append(f"  failover (as the health of those drops): {', '.join(d.failover)}")
        if d.resolved_by_dns:
            lines.append(f"  {DNS_NOTE}")
        if d.note:
            lines.append(f"  {d.note}")
    if outcome.upstream_path:
        lines.append(f"the upstream sees {outcome.upstream_path} (host {outcome.upstream_host})")
    return lines


def _sent(sent: Sent) -> list[str]:
    if sent.error:
        return [f"no answer: {sent.error}"]
    lines = [f"{sent.status}" + (" from the upstream" if sent.upstream else " from the proxy")]
    lines += [f"{name}: {value}" for name, value in sent.headers]
    if sent.body:
        body = sent.body if len(sent.body) <= 200 else sent.body[:200] + "..."
        lines.append(f"body: {body!r}")
    return lines


def difference(explanation: Explanation, sent: Sent) -> str | None:
    """How what the proxy did differs from the prediction; None when it does not (or the
    prediction left the answer to the extauth server or an external processor, or a filter
    gives that answer to a share of requests)."""
    outcome = explanation.outcome
    if outcome.action == "extauth" or explanation.asks_a_processor():
        return None
    if outcome.action == "close":
        return None if sent.error else f"the proxy answered {sent.status}"
    if sent.error:
        return f"no answer ({sent.error})"
    if explanation.may_answer(sent.status, sent.body):
        return None
    if outcome.action == "forward":
        failed = upstream_failed(sent.status, sent.body)
        # Names that did not resolve: what the DNS note of every destination says may happen.
        unresolved = sent.status == 503 and sent.body == NO_HEALTHY_UPSTREAM
        unresolved &= all(d.resolved_by_dns for d in outcome.destinations)
        if sent.upstream or failed or unresolved:
            return None
        return f"the proxy answered {sent.status} itself"
    if sent.status != outcome.status:
        return f"predicted {outcome.status}, got {sent.status}"
    if sent.upstream:
        return "the request went upstream"
    if outcome.body and sent.body != outcome.body:
        return f"predicted body {outcome.body!r}, got {sent.body!r}"
    predicted = dict(outcome.headers).get("location")
    actual = dict(sent.headers).get("location")
    if predicted is not None and predicted != actual:
        return f"predicted location {predicted}, got {actual}"
    return None
