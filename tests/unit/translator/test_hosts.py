"""Building one VirtualService hands back its contribution, findings and references as
values (`virtualhosts.build_host`): nothing is written into the build's shared reports and
references, which a later memoised builder relies on."""

from __future__ import annotations

from pathlib import Path

from gw import api
from gw.api import ResourceKey
from gw.store.directory import DirectoryStore
from gw.translator.gateway.virtualhosts import build_host
from gw.translator.options import Options
from gw.translator.refs import Edge, Refs
from gw.translator.reports import Finding, Reports

#: A VirtualService delegating to a route table, whose routes give a warning each.
DELEGATING = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    domains: [shop.test]
    routes:
      - matchers: [{prefix: /api}]
        delegateAction: {ref: {name: api}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: api, namespace: default}
spec:
  routes:
    - matchers: [{prefix: /other}]
      directResponseAction: {status: 200, body: other}
    - matchers: [{prefix: /api}]
      routeAction: {single: {upstream: {name: missing}}}
"""


def test_build_host_returns_findings_and_edges_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(DELEGATING)
    snapshot = DirectoryStore(tmp_path).scan()
    refs, reports = Refs(snapshot.resources, set()), Reports()
    (vs,) = snapshot.of_kind(api.VirtualService)

    built = build_host(vs, snapshot, Options(), refs, reports)

    assert refs.edges == [] and list(reports.items()) == []
    shop = ResourceKey("VirtualService", "default", "shop")
    table = ResourceKey("RouteTable", "default", "api")
    upstream = ResourceKey("Upstream", "default", "missing")
    assert built.edges == (
        Edge(shop, "spec.virtualHost.routes[0].delegateAction.ref", table),
        Edge(table, "spec.routes[1].routeAction.single.upstream", upstream),
    )
    missing = (
        "Route Warning: InvalidDestinationWarning. Reason: *v1.Upstream { default.missing } "
        "not found"
    )
    findings = {key: (errors, warnings) for key, errors, warnings in built.findings}
    assert set(findings) == {shop, table}
    errors, warnings = findings[table]
    assert errors == () and [f.field for f in warnings] == [
        "spec.routes[0].matchers[0]",
        "spec.routes[1].routeAction.single.upstream",
    ]
    assert warnings[1].message.startswith(missing)
    assert findings[shop] == (
        (),
        tuple(
            Finding(
                "spec.virtualHost.routes[0].delegateAction", f"on sub route table default.api: {w}"
            )
            for w in warnings
        ),
    )
    assert built.contribution is not None
    ((role, vhost),) = built.contribution.virtual_hosts
    assert role == "http" and vhost.domains == ("shop.test", "shop.test:*")
