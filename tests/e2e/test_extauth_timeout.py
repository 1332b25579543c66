"""SPEC.md: "Failing initial requests through the identity provider happen when
`extauth.requestTimeout` is too short for the external hop ... Raising `requestTimeout`
above the default resolves it."

Real `gw up`, real OIDC provider; the one stand-in is `DelayProxy` in front of the
provider, for the latency of a provider across the internet (loopback has none). With the
default 200ms, the callback (code exchange at the token endpoint) outlives Envoy's timeout:
Envoy answers 403 with an empty body and the login fails. With 1s it completes.

The folder starts without Settings and without an `extauth` Upstream: `gw up`'s own server,
which it declares, serves hosts by default. The Settings written later set only
`requestTimeout`, and keep that server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.extauth_manifests import (
    auth_config,
    extauth_backends,
    extauth_settings,
    protected_app,
)
from tests.support.latency import DelayProxy
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

#: Per request sent to the provider: a far-away provider's round trip. Above the 200ms
#: default on its own, so the code exchange outlives it even when the keys are cached.
HOP = 0.25


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("extauth-timeout")
    idp = OidcProvider(work)
    proxy = DelayProxy(idp.port, HOP)
    echo = Echo(work, "app")
    folder = work / "config"
    folder.mkdir()
    extauth_port = free_port()
    gw: GwUp | None = None
    try:
        gw = GwUp(folder, work / "home", extauth_port=extauth_port)
        issuer = f"http://127.0.0.1:{proxy.port}"
        (folder / "app.yaml").write_text(
            extauth_backends(None, echo.port, "s3cr3t")
            + "---"
            + auth_config("far", f"http://app.test:{gw.http_port}", issuer, client_id="far-app")
            + "---"
            + protected_app("far", "app.test:*", "far")
        )
        gw.wait_status("VirtualService default.far", "Accepted")
        yield {"gw": gw, "idp": idp, "folder": folder, "extauth_port": extauth_port}
    finally:
        if gw is not None:
            gw.stop()
        echo.stop()
        proxy.stop()
        idp.stop()


def login_callback(env: dict[str, Any], client: Agent) -> httpx.Response:
    start = client.start_login()
    return client.get(env["idp"].login(start.headers["location"], "slow@example.com"))


def ext_authz_timeout(gw: GwUp) -> str | None:
    """The `grpc_service.timeout` of the ext_authz filter Envoy runs."""
    dump = httpx.get(gw.proxy_admin_url + "/config_dump", timeout=5).json()
    for config in dump["configs"]:
        for listener in config.get("dynamic_listeners", []):
            for chain in listener["active_state"]["listener"]["filter_chains"]:
                for http_filter in chain["filters"][0]["typed_config"]["http_filters"]:
                    if http_filter["name"] == "envoy.filters.http.ext_authz":
                        return str(http_filter["typed_config"]["grpc_service"]["timeout"])
    return None


def test_default_timeout_fails_the_login_and_1s_fixes_it(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    assert ext_authz_timeout(gw) == "0.200s"  # the default
    client = Agent(gw.url, f"app.test:{gw.http_port}")
    failed = login_callback(env, client)
    assert failed.status_code == 403
    assert failed.content == b""
    assert "set-cookie" not in failed.headers
    assert client.get("/private").status_code == 302  # still not logged in

    (env["folder"] / "settings.yaml").write_text(extauth_settings("1s", server=False))
    gw.wait_status("Settings gw-system.default", "Accepted")
    wait_until(lambda: ext_authz_timeout(gw) == "1s", what="Envoy to get the 1s timeout")
    client = Agent(gw.url, f"app.test:{gw.http_port}")
    done = login_callback(env, client)
    assert done.status_code == 302, done.text
    assert done.headers["location"] == f"http://app.test:{gw.http_port}/private"
    assert client.get("/private").headers["x-echo-name"] == "app"
