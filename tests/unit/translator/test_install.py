"""What `gw up` declares to the translator: its own servers as the Upstreams `extauth` and
`rate-limit` in gw-system, named by default in the Settings, which the user's Settings are
read over field by field. (The goldens under tests/golden/cases/up show whole cases.)"""

from __future__ import annotations

from pathlib import Path

from gw import api
from gw.api import ResourceKey
from gw.store.directory import DirectoryStore
from gw.translator.gateway.install import declared_upstreams, install_settings, merge_under
from gw.translator.options import UP_EXTAUTH, UP_RATELIMIT, InstalledServer, Options
from gw.translator.translation import translate
from tests.golden.test_golden import UP_CASES

UP = Options(extauth_server=UP_EXTAUTH, ratelimit_server=UP_RATELIMIT)
EXTAUTH = ResourceKey("Upstream", "gw-system", "extauth")
RATELIMIT = ResourceKey("Upstream", "gw-system", "rate-limit")


def settings(spec: dict[str, object]) -> api.Settings:
    return api.Settings.model_validate(
        {
            "apiVersion": api.Settings.API_VERSION,
            "kind": "Settings",
            "metadata": {"name": "default", "namespace": "gw-system"},
            "spec": spec,
        }
    )


def test_the_servers_gw_up_runs_are_declared_unless_the_user_holds_the_name() -> None:
    assert sorted(declared_upstreams(UP, set())) == [EXTAUTH, RATELIMIT]
    assert list(declared_upstreams(UP, {EXTAUTH})) == [RATELIMIT]
    assert declared_upstreams(Options(), set()) == {}
    upstream = declared_upstreams(Options(extauth_server=UP_EXTAUTH), set())[EXTAUTH]
    assert upstream.spec.static is not None and upstream.spec.use_http2
    assert [(h.addr, h.port) for h in upstream.spec.static.hosts] == [("127.0.0.1", 8083)]


def test_the_extauth_http_checks_are_declared_next_to_the_server_over_http1() -> None:
    http = InstalledServer("127.0.0.1", 8084)
    declared = declared_upstreams(
        Options(extauth_server=UP_EXTAUTH, extauth_http_server=http), set()
    )
    upstream = declared[ResourceKey("Upstream", "gw-system", "extauth-http")]
    assert upstream.spec.static is not None and not upstream.spec.use_http2
    assert [(h.addr, h.port) for h in upstream.spec.static.hosts] == [("127.0.0.1", 8084)]
    assert declared[EXTAUTH].spec.use_http2


def test_a_partial_settings_block_keeps_the_install_server() -> None:
    installed = install_settings(UP)
    assert installed is not None
    user = settings({"extauth": {"requestTimeout": "1s"}, "rbac": {"requireRbac": True}})
    spec = merge_under(user.spec, installed.spec)
    assert spec.extauth is not None and spec.extauth.request_timeout == "1s"
    assert spec.extauth.extauthz_server_ref == api.ResourceRef(
        name="extauth", namespace="gw-system"
    )
    assert spec.ratelimit_server is not None
    assert spec.ratelimit_server.ratelimit_server_ref == api.ResourceRef(
        name="rate-limit", namespace="gw-system"
    )
    assert spec.rbac is not None and spec.rbac.require_rbac


def test_what_the_user_sets_wins() -> None:
    installed = install_settings(UP)
    assert installed is not None
    other = {"name": "my-auth", "namespace": "auth"}
    spec = merge_under(settings({"extauth": {"extauthzServerRef": other}}).spec, installed.spec)
    assert spec.extauth is not None
    assert spec.extauth.extauthz_server_ref == api.ResourceRef(name="my-auth", namespace="auth")
    # Writing the block as null switches the install's server off for hosts.
    assert merge_under(settings({"extauth": None}).spec, installed.spec).extauth is None


#: A host guarded by extauth, with no Settings and no extauth Upstream.
PROTECTED = UP_CASES / "extauth-builtin-no-settings.in.yaml"


def test_an_unreadable_user_upstream_holds_the_name_and_fails_the_hosts(tmp_path: Path) -> None:
    """A manifest for `gw-system.extauth` that does not parse is still the user's: gw up's
    own is not declared in its place, and hosts that need the server are rejected."""
    (tmp_path / "app.yaml").write_text(PROTECTED.read_text())
    (tmp_path / "extauth.yaml").write_text(
        "apiVersion: gw.vendor.io/v1\nkind: Upstream\n"
        "metadata: {name: extauth, namespace: gw-system}\nspec: {statik: {}}\n"
    )
    result = translate(DirectoryStore(tmp_path).scan(), UP)
    vs = ResourceKey("VirtualService", "default", "app")
    assert result.reports.rejected(EXTAUTH)
    (error,) = result.reports.of(vs).errors
    assert error.field == "spec.virtualHost.options.extauth.configRef"
    assert error.message == "Upstream gw-system.extauth is rejected; fix it first (see its status)"
    assert "extauth_gw-system" not in {c.name for c in result.proxy.clusters}
