"""A virtual host that sets no option (`hostfacts.asks_no_filter`) is left out when a
listener's HTTP filters are chosen, and its routes are written without asking each filter
for a per-route config (`routes.build_virtual_host`). Both shortcuts must change nothing:
for every golden input, the xDS with them is the xDS without them, byte for byte; and no
filter, on any listener the goldens make, does anything for such a host."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gw.translator import ir
from gw.translator.envoy import hostfacts, routes
from gw.translator.envoy.filters import HTTP_FILTERS, ROUTE_CONFIGURING
from gw.translator.envoy.hostfacts import ROUTING_FIELDS, asks_no_filter
from gw.translator.envoy.listeners import listener_http_filter
from gw.translator.translation import Result, translate
from tests.golden.test_golden import ALL_CASES, case_id, options_for, translate_case
from tests.unit.translator.test_incremental import same_xds


def _hosts(result: Result) -> list[tuple[ir.Listener, ir.VirtualHost]]:
    out = []
    for proxy in result.proxies:
        for listener in proxy.listeners:
            parts = (listener, *(m.http for m in listener.matched if m.http is not None))
            out += [(part, vhost) for part in parts for vhost in part.virtual_hosts]
    return out


@pytest.mark.parametrize("case", ALL_CASES, ids=case_id)
def test_hosts_asking_no_filter_translate_as_the_others(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot, with_shortcut = translate_case(case, tmp_path)
    monkeypatch.setattr(hostfacts, "asks_no_filter", lambda vhost: False)
    without = translate(snapshot, options_for(case))
    assert list(with_shortcut.served) == list(without.served)
    for role, xds in without.served.items():
        same_xds(with_shortcut.served[role].resources, xds.resources)


def test_the_goldens_have_hosts_of_both_kinds(tmp_path: Path) -> None:
    """The test above compares something: the goldens serve hosts that ask no filter, next
    to hosts that do, on the same listener."""
    mixed = 0
    for at, case in enumerate(ALL_CASES):
        folder = tmp_path / str(at)
        folder.mkdir()
        by_listener: dict[int, set[bool]] = {}
        for listener, vhost in _hosts(translate_case(case, folder)[1]):
            by_listener.setdefault(id(listener), set()).add(asks_no_filter(vhost))
        mixed += sum(found == {True, False} for found in by_listener.values())
    assert mixed >= 5


def _bare_host() -> ir.VirtualHost:
    """A host that sets no option, with every routing field used: several domains, a
    regex match on headers, query and methods, a delegated route, a weighted split."""
    source = ir.SourceRef(kind="VirtualService", namespace="bench", name="bare")
    table = ir.SourceRef(kind="RouteTable", namespace="bench", name="table")
    match = ir.RouteMatch(
        path_kind="regex",
        path="/a/[0-9]+",
        case_sensitive=False,
        headers=(ir.HeaderMatch(name="x-a", value="b"), ir.HeaderMatch(name="x-c")),
        query=(ir.QueryMatch(name="q", value="v.*", regex=True),),
        methods=("GET", "HEAD"),
    )
    split = (ir.WeightedCluster(cluster="bench_a", weight=3), ir.WeightedCluster(cluster="b"))
    routes = (
        ir.Route(
            name="bench_bare-route-0",
            match=match,
            action=ir.Forward(clusters=split),
            source=ir.RouteOrigin(resource=table, field="spec.routes[0].matchers[0]"),
            delegated_by=(ir.RouteOrigin(resource=source, field="spec.virtualHost.routes[0]"),),
        ),
        ir.Route(
            name="bench_bare-route-1",
            match=ir.RouteMatch(path_kind="prefix", path="/"),
            action=ir.Forward(clusters=(ir.WeightedCluster(cluster="bench_a"),)),
        ),
    )
    return ir.VirtualHost(
        name="bench_bare", source=source, domains=("a.test", "*.b.test"), routes=routes
    )


def test_a_host_that_sets_no_option_is_written_as_the_others() -> None:
    """Its routes, written without asking the filters (`routes._fill_forward`), are what
    the full route writer makes of them."""
    bare = _bare_host()
    assert asks_no_filter(bare)
    short = routes.build_virtual_host(bare, asks_filters=False)
    assert short == routes.build_virtual_host(bare)
    assert [r.WhichOneof("action") for r in short.routes] == ["route", "route"]


def test_no_filter_has_work_on_a_host_that_sets_no_option(tmp_path: Path) -> None:
    """On every listener the goldens make (with the Gateways' own filter settings), adding
    a host that sets no option changes none of the listener's filters, and no filter has a
    config for it or its route. A new filter that acts on such hosts fails here."""
    bare = _bare_host()
    assert asks_no_filter(bare)
    listeners = {}
    for at, case in enumerate(ALL_CASES):
        folder = tmp_path / str(at)
        folder.mkdir()
        for listener, _ in _hosts(translate_case(case, folder)[1]):
            listeners[id(listener)] = listener
    assert len(listeners) >= 50
    for listener in listeners.values():
        for http_filter in HTTP_FILTERS:
            alone = listener_http_filter(http_filter, listener, [bare])
            assert alone == listener_http_filter(http_filter, listener, []), http_filter.name
            if listener.virtual_hosts:
                others = list(listener.virtual_hosts)
                assert listener_http_filter(http_filter, listener, [*others, bare]) == (
                    listener_http_filter(http_filter, listener, others)
                ), http_filter.name
    for http_filter in ROUTE_CONFIGURING:
        assert http_filter.per_virtual_host(bare) is None, http_filter.name
        for route in bare.routes:
            assert http_filter.per_route(bare, route) is None, http_filter.name


@pytest.mark.parametrize(
    "change",
    [
        {"headers": ir.HeaderManipulation(request_headers_to_remove=("x-a",))},
        {"cors": ir.CorsPolicy(allow_origins=("https://a.test",))},
        {"ext_proc_servers": ()},
        {"stat_prefix": "bare"},
        {"timeout_ms": 5000},
        {"path_rewrite": "/x"},
        {"host_rewrite": "b.test"},
        {"action": ir.DirectResponse(status=200)},
    ],
    ids=lambda change: next(iter(change)),
)
def test_any_option_of_the_host_its_routes_or_clusters_asks(change: dict[str, object]) -> None:
    """Only names, domains, matches and destinations leave a host asking no filter."""
    bare = _bare_host()
    route, name = bare.routes[0], next(iter(change))
    forward = route.action
    assert isinstance(forward, ir.Forward)
    cluster = forward.clusters[0]
    if name in {f.name for f in dataclasses.fields(ir.VirtualHost)}:
        changed = dataclasses.replace(bare, **change)
    elif name in {f.name for f in dataclasses.fields(ir.Route)}:
        changed = dataclasses.replace(bare, routes=(dataclasses.replace(route, **change),))
    elif name in {f.name for f in dataclasses.fields(ir.Forward)}:
        action = dataclasses.replace(forward, **change)
        changed = dataclasses.replace(bare, routes=(dataclasses.replace(route, action=action),))
    else:
        clusters = (dataclasses.replace(cluster, **change),)
        action = dataclasses.replace(forward, clusters=clusters)
        changed = dataclasses.replace(bare, routes=(dataclasses.replace(route, action=action),))
    assert not asks_no_filter(changed)


def test_the_routing_fields_are_fields() -> None:
    """A renamed field cannot leave `ROUTING_FIELDS` naming nothing (and with it, every
    other field checked)."""
    for cls, names in ROUTING_FIELDS.items():
        assert names <= {f.name for f in dataclasses.fields(cls)}, cls.__name__
