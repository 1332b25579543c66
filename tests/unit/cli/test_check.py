"""`gwctl check` logic on canned control-plane answers.

tests/e2e/test_gwctl.py runs `check` against a real `gw up`. These cover what a healthy
test install cannot produce on demand: a proxy that NACKed its configuration, a failed
translation, kinds gw will read later, and secret findings on any referrer. The canned data
has the shape the admin API serves (`/statuses`, `/proxies`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from gw.cli import check
from gw.cli.install import Component, Install, LogSource


class CannedInstall(Install):
    kind = "canned"

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def admin(self, path: str) -> Any:
        return self.answers[path]

    def components(self) -> list[Component]:
        return [Component("gw", "gw-system", "control plane", available=True, running=True)]

    def proxy_url(self, name: str, namespace: str, port: str) -> str:
        raise NotImplementedError

    def proxy_admin(self, name: str, namespace: str) -> contextlib.AbstractContextManager[str]:
        raise NotImplementedError

    def xds_address(self) -> contextlib.AbstractContextManager[str]:
        raise NotImplementedError

    def logs(self) -> list[LogSource]:
        raise NotImplementedError

    def proxy_log(self, name: str, namespace: str) -> LogSource:
        raise NotImplementedError

    def write_manifest(self, manifest: dict[str, Any], text: str) -> str:
        raise NotImplementedError

    def apply(self, manifest: dict[str, Any], text: str, *, keep_comments: bool = False) -> bool:
        raise NotImplementedError

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        raise NotImplementedError

    def manifest(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {}


def key(kind: str, namespace: str, name: str) -> dict[str, str]:
    return {"kind": kind, "namespace": namespace, "name": name}


def row(kind: str, namespace: str, name: str, state: str, reason: str = "") -> dict[str, Any]:
    return {**key(kind, namespace, name), "status": {"state": state, "reason": reason}}


def facts(
    statuses: dict[str, Any],
    proxies: dict[str, Any] | None = None,
    proxy_resources: list[dict[str, Any]] | None = None,
) -> check.Facts:
    base = {"resources": [], "inputErrors": [], "references": [], "inputs": []}
    return check.Facts(
        CannedInstall(
            {
                "/statuses": base | statuses,
                "/proxies": proxies,
                "/snapshots/proxy-resources": proxy_resources or [],
            }
        )
    )


def connection(types: dict[str, Any], node: str = "gateway-proxy-1") -> dict[str, Any]:
    return {"node": node, "role": "gw-system~gateway-proxy", "types": types}


def test_secret_findings_come_from_the_referrers_status() -> None:
    vs = key("AuthConfig", "apps", "login")
    found = facts(
        {
            "resources": [
                row(
                    "AuthConfig",
                    "apps",
                    "login",
                    "Rejected",
                    "1 error occurred:\n\t* spec.configs[0].oauth2.oidcAuthorizationCode."
                    "clientSecretRef: secret apps.oauth has no client-secret key\n\n",
                )
            ],
            "references": [
                {
                    "referrer": vs,
                    "field": "spec.configs[0].oauth2.oidcAuthorizationCode.clientSecretRef",
                    "referent": key("Secret", "apps", "oauth"),
                },
                {
                    "referrer": vs,
                    "field": "spec.other",
                    "referent": key("Secret", "apps", "gone"),
                },
            ],
            "inputs": [vs, key("Secret", "apps", "oauth")],
        }
    )
    assert check.check_secrets(found) == [
        "Found invalid secret: apps oauth (referenced by auth config apps login: secret "
        "apps.oauth has no client-secret key)",
        "Found missing secret: apps gone (referenced by auth config apps login at spec.other)",
    ]


def test_kind_checks_are_generic() -> None:
    found = facts(
        {
            "resources": [
                row("RouteTable", "apps", "rt", "Warning", "warning: \n  spec.routes: odd"),
                row("RouteTable", "apps", "fine", "Accepted"),
            ],
            "references": [
                {
                    "referrer": key("RouteTable", "apps", "rt"),
                    "field": "spec.routes[0].delegateAction",
                    "referent": key("RouteTable", "apps", "missing"),
                }
            ],
            "inputs": [key("RouteTable", "apps", "rt"), key("RouteTable", "apps", "unjudged")],
        }
    )
    assert check.check_kind("RouteTable", found) == [
        "Found route table with no status: apps unjudged",
        "Found route table with warnings by 'gw-system': apps rt (Reason: spec.routes: odd)",
        "Route table references unknown route table: "
        "(Route table: apps rt | RouteTable: apps missing)",
    ]
    plan = [c.label for c in check.plan(found, skipped={"pods"})]
    assert plan[-2:] == ["RouteTables", "Proxies"] and "Pods" not in plan
    assert plan[:4] == ["Deployments", "Tasks", "Manifests", "Upstreams"]


def test_the_upstreams_gw_up_declares_need_no_status() -> None:
    """`gw up` declares the Upstreams of its own servers (`extauth`, `rate-limit`): inputs
    that references resolve to, with no status by design. A fresh `gw up` must pass the
    check; a user's Upstream left without a status still fails it."""
    declared = {**key("Upstream", "gw-system", "extauth"), "declared": True}
    found = facts(
        {
            "resources": [row("Upstream", "apps", "echo", "Accepted")],
            "inputs": [declared, key("Upstream", "apps", "echo"), key("Upstream", "apps", "new")],
        }
    )
    assert check.check_kind("Upstream", found) == ["Found upstream with no status: apps new"]


def test_proxy_checks_report_nacks_absence_and_translation_failures() -> None:
    nack = {"sent": "v2", "acked": "v1", "nack": {"version": "v2", "message": "bad listener"}}
    proxies = {
        "connections": [
            connection({"envoy.config.listener.v3.Listener": nack}),
            connection({}, node="gwctl-served-config-1"),
        ],
        "translation": {"error": "Traceback (most recent call last):\nKeyError: 'x'\n"},
    }
    failed = "1 error occurred:\n\t* the last translation failed (KeyError: 'x'): a bug\n\n"
    resources = [proxy_resource("gateway-proxy", "Rejected", failed)]
    assert check.check_proxies(facts({}, proxies, resources)) == [
        "Found rejected proxy: gw-system gateway-proxy: the last translation failed "
        "(KeyError: 'x'): a bug",
        "Found proxy that rejected its configuration: gw-system gateway-proxy (node "
        "gateway-proxy-1) rejected Listener version v2: bad listener",
    ]
    alone = {"connections": [connection({}, node="gwctl-x")], "translation": {"error": None}}
    assert check.check_proxies(facts({}, alone)) == [
        "Proxy gw-system gateway-proxy: no proxy is connected to the control plane"
    ]


def proxy_resource(name: str, state: str, reason: str = "") -> dict[str, Any]:
    status = {"state": state, "reason": reason}
    return {"metadata": {"name": name}, "status": {"statuses": {"gw-system": status}}}


def test_proxy_checks_cover_every_proxy_and_its_status() -> None:
    """A second proxy (a Gateway's `proxyNames`) is checked like the default one."""
    nack = {"sent": "v2", "acked": "v1", "nack": {"version": "v2", "message": "bad route"}}
    edge = {**connection({"envoy.config.route.v3.RouteConfiguration": nack}, node="edge-1")}
    edge["role"] = "gw-system~edge"
    proxies = {"connections": [connection({}), edge], "translation": {"error": None}}
    reason = "1 error occurred:\n\t* spec.listeners: port 9000 is shared\n\n"
    resources = [
        proxy_resource("gateway-proxy", "Accepted"),
        proxy_resource("edge", "Rejected", reason),
    ]
    assert check.check_proxies(facts({}, proxies, resources)) == [
        "Found rejected proxy: gw-system edge: spec.listeners: port 9000 is shared",
        "Found proxy that rejected its configuration: gw-system edge (node edge-1) rejected "
        "RouteConfiguration version v2: bad route",
    ]


def test_task_check_reports_recent_crashes_and_restarts() -> None:
    crash = {"error": "RecursionError: maximum recursion depth exceeded", "secondsAgo": 3.2}
    tasks = [
        {"name": "leader election", "state": "running", "healthy": True, "crashes": 0},
        {"name": "store", "state": "running", "healthy": False, "crashes": 1, "lastCrash": crash},
        {
            "name": "translation",
            "state": "restarting",
            "healthy": False,
            "crashes": 4,
            "lastCrash": crash,
            "restartInSeconds": 0.8,
        },
    ]
    assert check.check_tasks(check.Facts(CannedInstall({"/tasks": tasks}))) == [
        "Task store of the control plane crashed once (last 3.2s ago: RecursionError: maximum "
        "recursion depth exceeded); running again",
        "Task translation of the control plane crashed 4 times (last 3.2s ago: RecursionError: "
        "maximum recursion depth exceeded); restarting in 0.8s",
    ]
