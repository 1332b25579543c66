"""Output shapes shared by gwctl commands: error lists, data formats, status text, route
lines, and the dry-run manifests of `create` (run in-process: no install is needed)."""

from __future__ import annotations

import json

import pytest
import typer
import yaml
from typer.testing import CliRunner

from gw.cli import get, get_options, get_routes
from gw.cli.command import DataOutput, Output, emit, fail_many, version_mismatch
from gw.cli.gwctl import app

runner = CliRunner()


def test_many_errors_in_the_established_shape(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as exit_info:
        fail_many(["first problem", "second problem"])
    assert exit_info.value.exit_code == 1
    assert capsys.readouterr().err == (
        "Error: 2 errors occurred:\n\t* first problem\n\t* second problem\n\n"
    )
    with pytest.raises(typer.Exit):
        fail_many(["only one"])
    assert capsys.readouterr().err.splitlines()[0] == "Error: 1 error occurred:"


def test_emit_formats(capsys: pytest.CaptureFixture[str]) -> None:
    resources = [{"kind": "Upstream", "metadata": {"name": "a"}}, {"kind": "Upstream"}]
    emit(resources, Output.yaml, "TABLE")
    assert list(yaml.safe_load_all(capsys.readouterr().out)) == resources
    emit(resources, Output.json, "TABLE")
    assert json.loads(capsys.readouterr().out) == resources
    emit(resources, Output.table, "TABLE")
    assert capsys.readouterr().out == "TABLE\n"
    # The established tool's names for the same outputs, as its guides type them.
    emit(resources, Output("kube-yaml"), "TABLE")
    assert list(yaml.safe_load_all(capsys.readouterr().out)) == resources
    emit(resources, Output("wide"), "TABLE")
    assert capsys.readouterr().out == "TABLE\n"
    emit({"reason": "line one\nline two\n"}, DataOutput.yaml)
    out = capsys.readouterr().out
    assert out == "reason: |\n  line one\n  line two\n"
    emit([], DataOutput.yaml)
    assert capsys.readouterr().out == "[]\n"


def test_version_mismatch_text() -> None:
    assert version_mismatch("1.0.0", "1.1.0").splitlines() == [
        "----------",
        "gwctl binary version (1.0.0) differs from server components (1.1.0).",
        "gwctl must match the installed version; consider installing gwctl 1.1.0.",
        "----------",
    ]


def status(state: str, reason: str = "") -> dict[str, object]:
    return {"status": {"statuses": {"gw-system": {"state": state, "reason": reason}}}}


def test_status_text_lists_findings() -> None:
    assert get.state_text({}) == "Pending"
    assert get.state_text(status("Accepted")) == "Accepted"
    rejected = status("Rejected", "2 errors occurred:\n\t* spec.a: bad\n\t* spec.b: worse\n\n")
    assert get.state_text(rejected) == "Rejected\nspec.a: bad\nspec.b: worse"
    both = status(
        "Rejected", "1 error occurred:\n\t* spec.a: bad\n\n\nwarning: \n  spec.c: odd\nspec.d: x"
    )
    assert get.state_text(both).splitlines()[1:] == ["spec.a: bad", "spec.c: odd", "spec.d: x"]


def test_route_lines() -> None:
    def line(route: dict[str, object]) -> str:
        return get_routes.route_line(route, "default")

    single = {"single": {"upstream": {"name": "us"}}}
    assert line({"matchers": [{"prefix": "/a"}], "routeAction": single}) == (
        "/a -> default.us (upstream)"
    )
    orch = {"single": {"orch": {"ref": {"name": "svc", "namespace": "apps", "port": 80}}}}
    assert line({"name": "r", "routeAction": orch}) == "r: / -> apps.svc (service)"
    multi = {"multi": {"destinations": [{}, {}]}}
    assert line({"matchers": [{"exact": "/x"}], "routeAction": multi}) == "/x -> 2 destinations"
    assert line({"directResponseAction": {"status": 200}}) == "/ -> 200"
    assert line({"redirectAction": {"hostRedirect": "b.example.com"}}) == "/ -> b.example.com"


def test_upstream_details_and_ssl() -> None:
    orch = {"spec": {"orch": {"serviceName": "s", "serviceNamespace": "n", "servicePort": 8}}}
    assert get.upstream_type(orch) == "Orch"
    assert get.upstream_details(orch) == ("svc name:      s\nsvc namespace: n\nport:          8\n")
    static = {"spec": {"static": {"hosts": [{"addr": "a", "port": 1}, {"addr": "b", "port": 2}]}}}
    assert get.upstream_details(static) == "hosts:\n- a:1\n- b:2"
    assert get_routes.ssl_kind({}) == "none"
    assert get_routes.ssl_kind({"sslConfig": {"secretRef": {"name": "x"}}}) == "secret_ref"
    assert get_routes.ssl_kind({"sslConfig": {"sslFiles": {}}}) == "ssl_files"


def test_create_dry_runs_print_manifests_with_secrets_redacted() -> None:
    oauth = runner.invoke(
        app,
        ["create", "secret", "oauth", "--name", "o", "--client-secret", "s3cret", "--dry-run"],
    )
    assert oauth.exit_code == 0, oauth.output
    assert yaml.safe_load(oauth.stdout) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "o", "namespace": "gw-system"},
        "type": "extauth.vendor.io/oauth",
        "data": {"client-secret": "<redacted>"},
    }
    assert "s3cret" not in oauth.output
    from_stdin = runner.invoke(
        app,
        ["create", "secret", "oauth", "--name", "o", "--client-secret", "-", "--dry-run"],
        input="s3cret\n",
    )
    assert from_stdin.exit_code == 0 and "s3cret" not in from_stdin.output
    missing = runner.invoke(app, ["create", "secret", "oauth", "--name", "o", "--dry-run"])
    assert missing.exit_code == 1
    assert missing.stderr == "Error: client-secret not provided\n"


def test_create_apikey_dry_run() -> None:
    made = runner.invoke(
        app,
        ["create", "secret", "apikey", "infra", "--apikey", "k3y", "--apikey-labels",
         "team=infrastructure", "--dry-run"],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert yaml.safe_load(made.stdout) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "infra",
            "namespace": "gw-system",
            "labels": {"team": "infrastructure"},
        },
        "type": "extauth.vendor.io/apikey",
        "data": {"api-key": "<redacted>"},
    }
    assert "k3y" not in made.output
    bad = runner.invoke(
        app, ["create", "secret", "apikey", "x", "--apikey", "k", "--apikey-labels", "team"]
    )
    assert bad.exit_code == 1 and "--apikey-labels: 'team' is not key=value" in bad.stderr


def test_create_upstream_validates_like_the_control_plane() -> None:
    args = ["create", "upstream", "orch", "--orch-service", "svc", "--dry-run"]
    made = runner.invoke(app, [*args, "-n", "apps", "--orch-service-labels", "app=a,tier=web", "u"])
    assert made.exit_code == 0, made.output
    assert yaml.safe_load(made.stdout)["spec"]["orch"] == {
        "serviceName": "svc",
        "serviceNamespace": "default",
        "servicePort": 80,
        "selector": {"app": "a", "tier": "web"},
    }
    bad_labels = runner.invoke(app, [*args, "--orch-service-labels", "app", "u"])
    assert bad_labels.exit_code == 1 and "'app' is not key=value" in bad_labels.stderr
    bad_name = runner.invoke(app, [*args, ""])
    assert bad_name.exit_code == 1
    assert bad_name.stderr.startswith("Error: metadata.name: ")


def test_route_table_and_upstream_group_tables() -> None:
    table = {
        "metadata": {"name": "api", "namespace": "apis"},
        "spec": {
            "routes": [
                {"matchers": [{"prefix": "/api/v2"}], "delegateAction": {"ref": {"name": "v2"}}},
                {"matchers": [{"prefix": "/api"}], "delegateAction": {"selector": {}}},
                {"routeAction": {"upstreamGroup": {"name": "canary"}}},
            ]
        },
        **status("Accepted"),
    }
    rendered = get_routes.routetable_table([table])
    assert "ROUTE TABLE" in rendered and "ROUTES" in rendered
    assert "/api/v2 -> apis.v2 (route table)" in rendered
    assert "/api -> route tables by selector" in rendered
    assert "/ -> upstream group: canary.apis" in rendered
    group = {
        "metadata": {"name": "canary", "namespace": "apps"},
        "spec": {
            "destinations": [
                {"destination": {"upstream": {"name": "v1"}}, "weight": 90},
                {"destination": {"upstream": {"name": "v2", "namespace": "x"}}, "weight": 10},
            ]
        },
        **status("Warning", "warning: \n  spec.destinations: odd"),
    }
    rendered = get_routes.upstreamgroup_table([group])
    for text in ("UPSTREAM GROUP", "TOTAL WEIGHT", "| 100 ", "apps.v1 (upstream): weight 90"):
        assert text in rendered, rendered
    assert "x.v2 (upstream): weight 10" in rendered
    assert "spec.destinations: odd" in rendered


def test_options_tables_list_the_fields_each_resource_sets() -> None:
    vhopts = {
        "metadata": {"name": "cors-and-retries", "namespace": "apps"},
        "spec": {"options": {"retries": {"numRetries": 2}, "cors": {"allowOrigin": ["*"]}}},
        **status("Accepted"),
    }
    empty = {"metadata": {"name": "nothing", "namespace": "apps"}, "spec": {}, **status("Accepted")}
    rendered = get_options.options_table("Virtual Host Option", [vhopts, empty])
    assert "VIRTUAL HOST OPTION" in rendered and "OPTIONS" in rendered
    assert "cors-and-retries" in rendered and "nothing" in rendered
    rows = [line for line in rendered.splitlines() if line.startswith("| ")][1:]
    cells = [[cell.strip() for cell in row.split("|")[1:4]] for row in rows]
    assert cells[0] == ["cors-and-retries", "Accepted", "cors"]
    assert cells[1] == ["", "", "retries"]
    assert cells[2] == ["nothing", "Accepted", ""]


def test_create_authcredentials_dry_run() -> None:
    """The LDAP service account's Secret, as `ldap.groupLookupSettings` reads it."""
    made = runner.invoke(
        app,
        ["create", "secret", "authcredentials", "--name", "ldapcredentials",
         "--username", "cn=admin,dc=solo,dc=io", "--password", "-", "--dry-run"],
        input="solopwd\n",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert yaml.safe_load(made.stdout) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "ldapcredentials", "namespace": "gw-system"},
        "type": "extauth.vendor.io/accountcredentials",
        "data": {"username": "<redacted>", "password": "<redacted>"},
    }
    assert "solopwd" not in made.output
    missing = runner.invoke(
        app, ["create", "secret", "authcredentials", "--name", "c", "--username", "u", "--dry-run"]
    )
    assert missing.exit_code == 1 and missing.stderr == "Error: password not provided\n"
