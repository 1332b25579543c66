"""gwctl against a real `gw up` (control plane + Envoy) as an operator changes it: `get`
never hides a resource (not even one whose manifest could not be read), `apply` and
`delete` edit the served folder in place and print the status the control plane reports.

One `gw up` serves the module; each test restores the folder it changed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.gwctl import gwctl, ok, parse_table
from tests.support.manifests import upstream
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

ROUTES = """# The shop: two documents, and this comment stays.
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    domains: [shop.example.com]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gw-system}}}
---
# The blog keeps its place and its comment.
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: blog, namespace: team}
spec:
  virtualHost:
    domains: [blog.example.com]
    routes:
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200, body: blog}
"""

UNREADABLE = {
    # A resource never accepted: its only manifest has an unknown field.
    "typo.yaml": """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: typo, namespace: default}
spec:
  virtualHost:
    domainz: [typo.example.com]
""",
    "login.yaml": """
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {name: login, namespace: default}
spec:
  configs: []
""",
    "junk-secret.yaml": """
apiVersion: v1
kind: Secret
metadata: {name: junk, namespace: gw-system}
type: kubernetes.io/tls
data: {tls.crt: "not base64!"}
""",
    "broken.yaml": "kind: [oops\n",
}


@dataclass
class Setup:
    gw: GwUp
    folder: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return gwctl(self.gw.home, *args)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("changes")
    echo = Echo(root, "echo")
    folder = root / "config"
    folder.mkdir()
    (folder / "upstreams.yaml").write_text(upstream("echo", echo.port, "gw-system"))
    (folder / "routes.yaml").write_text(ROUTES)
    gw = GwUp(folder, root / "home")
    try:
        yield Setup(gw, folder)
    finally:
        gw.stop()
        echo.stop()


def test_get_lists_resources_whose_manifests_cannot_be_read(setup: Setup) -> None:
    for name, text in UNREADABLE.items():
        (setup.folder / name).write_text(text)
    try:
        setup.gw.wait_status("VirtualService default.typo", "Rejected")
        setup.gw.wait_status("AuthConfig default.login", "Rejected")
        listed = setup.run("get", "vs")
        rows = {r["VIRTUAL SERVICE"]: r for r in parse_table(ok(listed))}
        assert sorted(rows) == ["blog", "shop", "typo"]
        assert rows["typo"]["STATUS"] == (
            "Rejected\ntypo.yaml, document 1: spec.virtualHost.domainz: unknown field"
        )
        assert rows["typo"]["DOMAINS"] == ""  # never accepted: it serves nothing
        assert listed.stderr == (
            "Warning: 1 manifest could not be read; what they hold is not listed:\n"
            "  broken.yaml: invalid YAML at line 2, column 1: did not find expected ',' or ']'\n"
        )
        [login] = parse_table(ok(setup.run("get", "authconfig")))
        assert login["AUTHCONFIG"] == "login" and login["STATUS"].startswith("Rejected\n")
        assert "spec.configs: List should have at least 1 item" in login["STATUS"]
        secrets = {r["SECRET"]: r for r in parse_table(ok(setup.run("get", "secret")))}
        assert secrets["junk"]["TYPE"] == ""  # never read: its type is unknown
        assert secrets["junk"]["STATUS"].startswith("Rejected\njunk-secret.yaml, document 1:")
        [typo] = json.loads(ok(setup.run("get", "vs", "typo", "-o", "json")))
        assert typo["metadata"] == {"name": "typo", "namespace": "default"}
        assert typo["status"]["statuses"]["gw-system"]["state"] == "Rejected"
    finally:
        for name in UNREADABLE:
            (setup.folder / name).unlink()
        wait_until(lambda: setup.gw.status("VirtualService default.typo") is None)


def test_get_every_namespace_unless_one_is_named(setup: Setup) -> None:
    every = [r["VIRTUAL SERVICE"] for r in parse_table(ok(setup.run("get", "vs")))]
    assert every == ["shop", "blog"]  # sorted by namespace, then name: default, team
    assert [
        r["VIRTUAL SERVICE"] for r in parse_table(ok(setup.run("get", "vs", "-n", "team")))
    ] == ["blog"]
    everywhere = parse_table(ok(setup.run("get", "vs", "-n", "team", "-A")))
    assert [r["VIRTUAL SERVICE"] for r in everywhere] == every
    missing = setup.run("get", "vs", "shop", "-n", "team")
    assert (missing.returncode, missing.stderr) == (
        1,
        "Error: VirtualService 'shop' not found in namespace team\n",
    )
    upstreams = parse_table(ok(setup.run("get", "upstreams", "-n", "gw-system")))
    assert [u["UPSTREAM"] for u in upstreams] == ["echo"]


def test_apply_changes_a_document_in_place_and_prints_statuses(
    setup: Setup, tmp_path: Path
) -> None:
    routes = setup.folder / "routes.yaml"
    applied = tmp_path / "blog.yaml"
    applied.write_text(
        "# Blog v2\n"
        + ROUTES.split("---\n")[1].split("\n", 1)[1].replace("body: blog", "body: blog v2")
    )
    try:
        changed = setup.run("apply", "-f", str(applied))
        assert (changed.returncode, changed.stdout) == (
            0,
            "VirtualService team.blog configured: Accepted\n",
        ), changed.stderr
        # The shop's document, its comment, and the separator are untouched.
        text = routes.read_text()
        assert text.startswith(ROUTES.split("---\n")[0] + "---\n# Blog v2\n")
        assert setup.gw.get("/", host="blog.example.com").text == "blog v2"
        again = setup.run("apply", "-f", str(applied))
        assert again.stdout == "VirtualService team.blog unchanged: Accepted\n"
    finally:
        routes.write_text(ROUTES)
        wait_until(lambda: setup.gw.get("/", host="blog.example.com").text == "blog")


def test_apply_creates_new_resources_and_fails_on_a_rejected_one(
    setup: Setup, tmp_path: Path
) -> None:
    manifests = tmp_path / "new"
    manifests.mkdir()
    (manifests / "a.yaml").write_text(
        "apiVersion: gateway.vendor.io/v1\nkind: VirtualService\n"
        "metadata: {name: fresh}\n"
        "spec:\n  virtualHost:\n    domains: [fresh.example.com]\n    routes:\n"
        "      - matchers: [{regex: '(unclosed'}]\n"
        "        directResponseAction: {status: 200, body: fresh}\n"
    )
    created_file = setup.folder / "gwctl-created" / "virtualservice-default-fresh.yaml"
    try:
        created = setup.run("apply", "-f", str(manifests))
        assert created.returncode == 1  # Rejected
        lines = created.stdout.splitlines()
        assert lines[0] == "VirtualService default.fresh created: Rejected"
        assert lines[1].startswith("    spec.virtualHost.routes[0].matchers[0].regex: ")
        assert created_file.exists()
    finally:
        created_file.unlink(missing_ok=True)
        wait_until(lambda: setup.gw.status("VirtualService default.fresh") is None)


def test_apply_refuses_a_manifest_gw_cannot_read_and_writes_nothing(
    setup: Setup, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        ROUTES.split("---\n")[1].replace("domains:", "domainz:")
        + "---\n"
        + ROUTES.split("---\n")[0]
    )
    before = (setup.folder / "routes.yaml").read_text()
    refused = setup.run("apply", "-f", str(bad))
    assert refused.returncode == 1
    assert refused.stderr == (
        "Error: 2 errors occurred:\n"
        f"\t* {bad}, document 1: VirtualService team.blog: spec.virtualHost.domainz: "
        "unknown field\n"
        "\t* nothing was applied\n\n"
    )
    assert (setup.folder / "routes.yaml").read_text() == before


def test_delete_removes_the_document_and_shows_what_it_broke(setup: Setup) -> None:
    upstreams = setup.folder / "upstreams.yaml"
    kept = upstreams.read_text()
    try:
        deleted = setup.run("delete", "upstream", "echo")
        assert deleted.returncode == 0, deleted.stderr
        assert deleted.stdout.splitlines()[:3] == [
            "Upstream gw-system.echo deleted",
            "Statuses that changed with it:",
            "  VirtualService default.shop: Warning",
        ]
        assert not upstreams.exists()  # its only document: the file went with it
        missing = setup.run("delete", "upstream", "echo")
        assert (missing.returncode, missing.stderr) == (
            1,
            "Error: Upstream 'echo' not found\n",
        )
        unknown = setup.run("delete", "gizmo", "x")
        assert unknown.returncode == 1 and "unknown kind 'gizmo'" in unknown.stderr
    finally:
        upstreams.write_text(kept)
        setup.gw.wait_status("Upstream gw-system.echo", "Accepted")
        setup.gw.wait_status("VirtualService default.shop", "Accepted")


def test_delete_by_manifest_keeps_the_rest_of_the_file(setup: Setup, tmp_path: Path) -> None:
    routes = setup.folder / "routes.yaml"
    blog = tmp_path / "blog.yaml"
    blog.write_text(ROUTES.split("---\n")[1])
    try:
        deleted = setup.run("delete", "-f", str(blog))
        assert ok(deleted) == "VirtualService team.blog deleted\n"
        left = list(yaml.safe_load_all(routes.read_text()))
        assert [d["metadata"]["name"] for d in left] == ["shop"]
        assert routes.read_text().startswith("# The shop: two documents, and this comment stays.")
    finally:
        routes.write_text(ROUTES)
        setup.gw.wait_status("VirtualService team.blog", "Accepted")
