"""Cloud upstreams, where the goldens cannot look: which Azure function key each route
sends (goldens show keys redacted), that no view of the configuration shows a key, and
where the proxies find the GCP metadata server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gw.api import parse_document
from gw.explain.outcome import header_changes
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.dump import proxy_to_data, xds_to_data
from gw.translator.envoy import names
from gw.translator.options import InstalledServer, Options
from gw.translator.translation import Result, translate

CASES = Path(__file__).resolve().parents[2] / "golden" / "cases"
MASTER, OWN = "the-master-key", "function-key-for-uppercase"


def translated(case: str, options: Options | None = None) -> Result:
    docs = yaml.safe_load_all((CASES / f"{case}.in.yaml").read_text())
    resources = [parse_document(d) for d in docs if d]
    return translate(Snapshot(resources={r.key: r for r in resources}), options or Options())


def test_each_azure_function_sends_the_key_its_auth_level_needs() -> None:
    result = translated("upstream-azure-functions")
    (vhost,) = [v for listener in result.proxy.listeners for v in listener.virtual_hosts]
    keys = {}
    for route in vhost.routes:
        assert isinstance(route.action, ir.Forward)
        keys[route.match.path] = route.action.clusters[0].function_key
    # anonymous: none; Function: its own key, else _master; Admin: _master; no function: none
    assert keys == {
        "/hello": None,
        "/upper": OWN,
        "/report": MASTER,
        "/admin/purge": MASTER,
        "/": None,
    }
    routes = result.xds.of(names.ROUTE)
    sent = {
        r.match.prefix or r.match.path: [h.header.value for h in r.request_headers_to_add]
        for config in routes.values()
        for v in config.virtual_hosts
        for r in v.routes
    }
    assert sent["/upper"] == [OWN] and sent["/report"] == [MASTER] and sent["/hello"] == []


def test_no_view_of_the_configuration_shows_a_function_key() -> None:
    result = translated("upstream-azure-functions")
    shown = json.dumps(proxy_to_data(result.proxy)) + json.dumps(xds_to_data(result.xds))
    assert OWN not in shown and MASTER not in shown
    assert "x-functions-key" in shown  # the header is named, its value is not
    for config in result.xds.of(names.ROUTE).values():
        for vhost in config.virtual_hosts:
            for route in vhost.routes:
                for change in header_changes(route, vhost):
                    assert OWN not in change and MASTER not in change


def test_the_metadata_server_is_googles_unless_told_another() -> None:
    def metadata_cluster(result: Result) -> ir.Cluster:
        (found,) = [c for c in result.proxy.clusters if c.name == "gw~gcp-metadata"]
        return found

    google = metadata_cluster(translated("upstream-gcp-cloud-run"))
    assert (google.discovery, google.endpoints[0].address) == ("dns", "metadata.google.internal")
    assert google.endpoints[0].port == 80
    local = InstalledServer.parse("127.0.0.1:8181", 80)
    here = metadata_cluster(
        translated("upstream-gcp-cloud-run", Options(gcp_metadata_server=local))
    )
    assert (here.discovery, here.endpoints[0].address, here.endpoints[0].port) == (
        "static",
        "127.0.0.1",
        8181,
    )
    # No gcp upstream, no metadata cluster.
    assert all(
        c.name != "gw~gcp-metadata" for c in translated("upstream-aws-lambda").proxy.clusters
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metadata.google.internal", ("metadata.google.internal", 80)),
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("[::1]:81", ("::1", 81)),
        ("::1", ("::1", 80)),
    ],
)
def test_a_server_address_is_host_and_optional_port(text: str, expected: tuple[str, int]) -> None:
    parsed = InstalledServer.parse(text, 80)
    assert (parsed.host, parsed.port) == expected


@pytest.mark.parametrize("text", ["", ":80", "host:http", "host:0", "host:70000"])
def test_a_bad_server_address_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not host\\[:port\\]"):
        InstalledServer.parse(text, 80)
