"""Sharded listeners through a real Envoy: a listener of 256 virtual hosts or more whose
domains all name exact hosts is served through scoped routes (SRDS), the `Host` choosing a
shard (docs/routing.md). Routing must be what one route configuration gives: every host
reaches its own upstream, an edit changes one host's answer, a new host name is served
and a removed one is not, and an upper-case `Host` gets the 404 the docs describe.

Upstreams are `gw echo` processes answering with their name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from gw.translator.options import SHARD_ROUTES_FROM
from tests.e2e.test_routing import echo_name, upstream, virtual_service
from tests.support.gwctl import gwctl
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

HOSTS = SHARD_ROUTES_FROM + 44  # above the threshold: the listener is sharded


def _host(n: int) -> str:
    return f"h-{n}.shards.test"


def _folder(tmp_path: Path, alpha: int, beta: int) -> Path:
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "upstreams.yaml").write_text(
        upstream("alpha", alpha) + "---" + upstream("beta", beta)
    )
    hosts = [
        virtual_service(f"vs-{n}", [_host(n)], [("/", "alpha" if n % 2 else "beta")])
        for n in range(HOSTS)
    ]
    (folder / "hosts.yaml").write_text("---".join(hosts))
    return folder


@pytest.fixture
def sharded(tmp_path: Path, echo_factory: Any, gw_up_factory: Any) -> dict[str, Any]:
    alpha, beta = echo_factory("alpha"), echo_factory("beta")
    folder = _folder(tmp_path, alpha.port, beta.port)
    gw = gw_up_factory(folder)
    wait_until(
        lambda: gw.get("/", host=_host(HOSTS - 1)).status_code == 200,
        timeout=60,
        what="the last host to be served",
    )
    return {"gw": gw, "folder": folder}


def _served(gw: Any) -> dict[str, Any]:
    return httpx.get(gw.proxy_admin_url + "/config_dump", timeout=10).json()


def test_every_host_reaches_its_upstream_through_scoped_routes(sharded: dict[str, Any]) -> None:
    gw = sharded["gw"]
    dump = _served(gw)
    types = {c["@type"].rsplit(".", 1)[-1] for c in dump["configs"]}
    assert "ScopedRoutesConfigDump" in types  # served in shards, not one route configuration
    scoped = next(c for c in dump["configs"] if c["@type"].endswith("ScopedRoutesConfigDump"))
    scopes = [
        s for group in scoped["dynamic_scoped_route_configs"] for s in group["scoped_route_configs"]
    ]
    assert len(scopes) == HOSTS
    for n in range(0, HOSTS, 7):
        assert echo_name(gw.get("/x", host=_host(n))) == ("alpha" if n % 2 else "beta")
    assert echo_name(gw.get("/", host=f"{_host(3)}:{gw.http_port}")) == "alpha"  # with port
    assert gw.get("/", host="nobody.shards.test").status_code == 404
    # Documented: scope keys compare as sent, so an upper-case Host matches no shard.
    assert gw.get("/", host=_host(3).upper()).status_code == 404


def test_an_edit_a_new_host_and_a_removed_one(sharded: dict[str, Any]) -> None:
    gw, folder = sharded["gw"], sharded["folder"]
    (folder / "edit.yaml").write_text(virtual_service("vs-5", [_host(5)], [("/", "beta")]))
    (folder / "hosts.yaml").write_text(
        "---".join(
            virtual_service(f"vs-{n}", [_host(n)], [("/", "alpha" if n % 2 else "beta")])
            for n in range(HOSTS)
            if n not in (5, 6)  # vs-5 moved to edit.yaml, vs-6 removed
        )
    )
    (folder / "new.yaml").write_text(
        virtual_service("fresh", ["fresh.shards.test"], [("/", "alpha")])
    )
    wait_until(
        lambda: gw.get("/", host=_host(5)).headers.get("x-echo-name") == "beta",
        timeout=30,
        what="the edited host to answer from beta",
    )
    wait_until(
        lambda: gw.get("/", host="fresh.shards.test").status_code == 200,
        timeout=30,
        what="the new host name to be served",
    )
    wait_until(
        lambda: gw.get("/", host=_host(6)).status_code == 404,
        timeout=30,
        what="the removed host to be gone",
    )
    assert echo_name(gw.get("/", host="fresh.shards.test")) == "alpha"
    assert echo_name(gw.get("/", host=_host(7))) == "alpha"  # its neighbours untouched
    assert echo_name(gw.get("/", host=_host(4))) == "beta"


def test_explain_and_served_config_follow_the_scopes(sharded: dict[str, Any]) -> None:
    """`gwctl explain` finds a host's scope and shard as Envoy does, and predicts the answer
    the proxy gives; `gwctl proxy served-config` shows the scopes and every shard."""
    gw = sharded["gw"]
    url = f"http://127.0.0.1:{gw.http_port}/x"
    done = gwctl(gw.home, "explain", "GET", url, "-H", f"Host: {_host(9)}", "--send", "-o", "json")
    assert done.returncode == 0, done.stderr
    explained = json.loads(done.stdout)
    assert any(s.startswith("scope ") and _host(9) in s for s in explained["connection"])
    assert explained["virtual_host"] == "default_vs-9"
    assert explained["sent"]["status"] == 200 and explained["sent"]["matchesPrediction"]
    missing = gwctl(gw.home, "explain", "GET", url, "-H", "Host: nobody.shards.test")
    assert "Outcome       404" in missing.stdout, missing.stdout  # no scope for that host
    served = gwctl(gw.home, "proxy", "served-config")
    assert served.returncode == 0, served.stderr
    shards = {
        line.split(": ", 1)[1]
        for line in served.stdout.splitlines()
        if line.startswith("- name: ") and "-routes-0" in line
    }
    assert len(shards) > 1  # every shard's route configuration, not only unsharded ones
    assert served.stdout.count("route_configuration_name: ") == HOSTS
