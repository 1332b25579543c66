"""`gwctl check`: is the installation healthy? One line per check, as the established tool
prints them (REFERENCE.md §7.2):

    Checking Deployments... OK
    Checking Upstreams... 1 Errors!
    ...
    No problems detected.        (only when every check passed)

Problems go to stderr as `Error: N errors occurred:` and one `\\t* <problem>` line each;
the exit status is 1. Resource checks are generic: they read the statuses, references and
input errors the control plane serves (`/statuses`), so every kind gw reads is covered,
including kinds added later. Kinds gw does not read (yet) have nothing to check and pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

import typer

from gw.cli.command import AdminUrl, connect, emit, fail_many
from gw.cli.get import findings
from gw.cli.install import CONTROLLER_NAMESPACE, PROXY_NAME, Install, InstallError

NO_PROBLEMS = "No problems detected."


class CheckOutput(StrEnum):
    table = "table"
    json = "json"


@dataclass(frozen=True, slots=True)
class Check:
    label: str
    #: The name `--exclude` takes.
    name: str
    #: The resource kind checked, for resource checks.
    kind: str | None = None


#: The established tool's checks, in its order. Resource kinds that are read but not listed
#: here get a check of their own before `Proxies`.
CHECKS = (
    Check("Deployments", "deployments"),
    Check("Pods", "pods"),
    Check("Tasks", "tasks"),
    Check("Manifests", "manifests"),
    Check("Upstreams", "upstreams", "Upstream"),
    Check("UpstreamGroups", "upstreamgroup", "UpstreamGroup"),
    Check("AuthConfigs", "auth-configs", "AuthConfig"),
    Check("RateLimitConfigs", "rate-limit-configs", "RateLimitConfig"),
    Check("VirtualHostOptions", "virtual-host-options", "VirtualHostOption"),
    Check("RouteOptions", "route-options", "RouteOption"),
    Check("Secrets", "secrets", "Secret"),
    Check("VirtualServices", "virtual-services", "VirtualService"),
    Check("Gateways", "gateways", "Gateway"),
    Check("Proxies", "proxies"),
)


@dataclass(slots=True)
class Outcome:
    label: str
    errors: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "OK" if not self.errors else f"{len(self.errors)} Errors!"


class Facts:
    """What the checks read, fetched once and only when a check needs it."""

    def __init__(self, install: Install) -> None:
        self.install = install
        self._cache: dict[str, Any] = {}

    def get(self, path: str) -> Any:
        if path not in self._cache:
            self._cache[path] = self.install.admin(path)
        return self._cache[path]

    @property
    def statuses(self) -> dict[str, Any]:
        data: dict[str, Any] = self.get("/statuses")
        return data


def check(
    output: Annotated[
        CheckOutput, typer.Option("-o", "--output", help="table or json.")
    ] = CheckOutput.table,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "-x",
            "--exclude",
            help="Checks to skip (repeat or comma-separate): " + ", ".join(c.name for c in CHECKS),
        ),
    ] = None,
    admin_url: AdminUrl = None,
) -> None:
    """Check deployments, processes, resources, secrets and proxies.

    Ends with `No problems detected.` when healthy; otherwise lists the problems on stderr
    and exits 1.
    """
    install = connect(admin_url)
    skipped = {name.strip() for item in exclude or [] for name in item.split(",")}
    facts = Facts(install)
    outcomes: list[Outcome] = []
    table = output is CheckOutput.table
    for item in plan(facts, skipped):
        if table:
            typer.echo(f"Checking {item.label}... ", nl=False)
        outcome = Outcome(item.label)
        try:
            outcome.errors = run_check(item, facts)
            stop = False
        except InstallError as exc:
            outcome.errors = [f"cannot run the remaining checks: {exc}"]
            stop = True
        outcomes.append(outcome)
        if table:
            typer.echo(outcome.status)
        if stop:
            break
    errors = [e for o in outcomes for e in o.errors]
    if not table:
        emit(
            {
                "resources": [{"name": o.label, "status": o.status} for o in outcomes],
                "messages": [] if errors else [NO_PROBLEMS],
                "errors": errors,
            },
            output,
        )
    elif not errors:
        typer.echo(NO_PROBLEMS)
    if errors:
        fail_many(errors)


def plan(facts: Facts, skipped: set[str]) -> list[Check]:
    """The checks to run: the established list plus one per other kind that has statuses."""
    listed = {c.kind for c in CHECKS if c.kind}
    try:
        seen = {r["kind"] for r in facts.statuses["resources"]}
    except InstallError:
        seen = set()
    extra = [Check(_plural(k), _plural(k).lower(), k) for k in sorted(seen - listed)]
    checks = [*CHECKS[:-1], *extra, CHECKS[-1]]
    return [c for c in checks if c.name not in skipped]


def run_check(item: Check, facts: Facts) -> list[str]:
    special: dict[str, Callable[[Facts], list[str]]] = {
        "deployments": check_deployments,
        "pods": check_pods,
        "tasks": check_tasks,
        "manifests": check_manifests,
        "secrets": check_secrets,
        "proxies": check_proxies,
    }
    if item.name in special:
        return special[item.name](facts)
    assert item.kind is not None
    return check_kind(item.kind, facts)


def check_deployments(facts: Facts) -> list[str]:
    return [
        f"Deployment {c.name} in namespace {c.namespace} is not available! ({c.detail})"
        for c in facts.install.components()
        if not c.available
    ]


def check_pods(facts: Facts) -> list[str]:
    problems = []
    for c in facts.install.components():
        if not c.running:
            problems.append(
                f"Pod of {c.name} in namespace {c.namespace} is not running! "
                f"(restarted {c.restarts} times)"
            )
    return problems


def check_tasks(facts: Facts) -> list[str]:
    """The control plane's long-running tasks (folder watcher, translation loop, leader
    election, ...) that crashed lately or are waiting to restart: each crash is a bug, even
    when the task runs again."""
    problems = []
    for task in facts.get("/tasks"):
        if task["healthy"]:
            continue
        crash = task.get("lastCrash") or {}
        times = "once" if task["crashes"] == 1 else f"{task['crashes']} times"
        now = (
            f"restarting in {task.get('restartInSeconds', 0)}s"
            if task["state"] == "restarting"
            else "running again"
        )
        problems.append(
            f"Task {task['name']} of the control plane crashed {times} (last "
            f"{crash.get('secondsAgo')}s ago: {crash.get('error')}); {now}"
        )
    return problems


def check_manifests(facts: Facts) -> list[str]:
    """Files that could not be read at all: no resource carries their error."""
    return [
        f"Found manifest that cannot be read: {e['source'] or '?'}: {e['message']}"
        for e in facts.statuses["inputErrors"]
        if e.get("resource") is None
    ]


def check_kind(kind: str, facts: Facts) -> list[str]:
    noun = _noun(kind)
    problems = []
    statuses = facts.statuses
    by_key = {_key(r): r["status"] for r in statuses["resources"] if r["kind"] == kind}
    for item in statuses["inputs"]:
        # What `gw up` declares for its own servers has no status by design (it is not the
        # user's resource): only the user's inputs can be left unjudged.
        if item["kind"] == kind and _key(item) not in by_key and not item.get("declared"):
            problems.append(f"Found {noun} with no status: {item['namespace']} {item['name']}")
    for (_, namespace, name), status in sorted(by_key.items()):
        reason = "; ".join(findings(status))
        if status["state"] == "Rejected":
            problems.append(
                f"Found rejected {noun} by '{CONTROLLER_NAMESPACE}': "
                f"{namespace} {name} (Reason: {reason})"
            )
        elif status["state"] == "Warning":
            problems.append(
                f"Found {noun} with warnings by '{CONTROLLER_NAMESPACE}': "
                f"{namespace} {name} (Reason: {reason})"
            )
    present = {_key(i) for i in statuses["inputs"]}
    for ref in statuses["references"]:
        referrer, referent = ref["referrer"], ref["referent"]
        if referrer["kind"] != kind or referent["kind"] == "Secret":
            continue
        if _key(referent) not in present:
            problems.append(
                f"{_noun(kind).capitalize()} references unknown {_noun(referent['kind'])}: "
                f"({_noun(kind).capitalize()}: {referrer['namespace']} {referrer['name']} | "
                f"{referent['kind']}: {referent['namespace']} {referent['name']})"
            )
    return problems


def check_secrets(facts: Facts) -> list[str]:
    """Secrets have no status of their own: their problems show on the resources that use
    them. Reported here: unreadable secret manifests, references to secrets that do not
    exist, and references whose referrer has a finding on that very field."""
    statuses = facts.statuses
    problems = [
        f"Found unreadable secret: {e['resource']['namespace']} {e['resource']['name']} "
        f"(Reason: {e['message']})"
        for e in statuses["inputErrors"]
        if e.get("resource") and e["resource"]["kind"] == "Secret"
    ]
    present = {_key(i) for i in statuses["inputs"]}
    by_key = {_key(r): r["status"] for r in statuses["resources"]}
    seen: set[tuple[str, ...]] = set()
    for ref in statuses["references"]:
        referrer, referent, where = ref["referrer"], ref["referent"], ref["field"]
        if referent["kind"] != "Secret" or (*_key(referrer), where) in seen:
            continue
        seen.add((*_key(referrer), where))
        used_by = f"{_noun(referrer['kind'])} {referrer['namespace']} {referrer['name']}"
        secret = f"{referent['namespace']} {referent['name']}"
        if _key(referent) not in present:
            problems.append(f"Found missing secret: {secret} (referenced by {used_by} at {where})")
            continue
        status = by_key.get(_key(referrer))
        for finding in findings(status) if status else []:
            if finding.startswith(f"{where}: "):
                problems.append(
                    f"Found invalid secret: {secret} (referenced by {used_by}: "
                    f"{finding.removeprefix(where + ': ')})"
                )
    return problems


def check_proxies(facts: Facts) -> list[str]:
    """The default proxy has a connected Envoy; no Envoy of any proxy rejected its config;
    no Proxy is rejected (e.g. two gateways on one port, or the last translation failed:
    the control plane puts that on every Proxy)."""
    data = facts.get("/proxies")
    resources = facts.get("/snapshots/proxy-resources")
    names = [p["metadata"]["name"] for p in resources] or [PROXY_NAME]
    roles = {f"{CONTROLLER_NAMESPACE}~{n}": n for n in names}
    connections = [
        c for c in data["connections"] if c["role"] in roles and not c["node"].startswith("gwctl-")
    ]
    problems = []
    if not any(c["role"] == f"{CONTROLLER_NAMESPACE}~{PROXY_NAME}" for c in connections):
        problems.append(
            f"Proxy {CONTROLLER_NAMESPACE} {PROXY_NAME}: no proxy is connected to the control plane"
        )
    for resource in resources:
        status = resource.get("status", {}).get("statuses", {}).get(CONTROLLER_NAMESPACE, {})
        if status.get("state") == "Rejected":
            for finding in findings(status):
                problems.append(
                    f"Found rejected proxy: {CONTROLLER_NAMESPACE} "
                    f"{resource['metadata']['name']}: {finding}"
                )
    for conn in connections:
        for type_name, state in sorted(conn["types"].items()):
            nack = state.get("nack")
            if nack:
                problems.append(
                    f"Found proxy that rejected its configuration: {CONTROLLER_NAMESPACE} "
                    f"{roles[conn['role']]} (node {conn['node']}) rejected "
                    f"{type_name.rsplit('.', 1)[-1]} version {nack['version']}: {nack['message']}"
                )
    return problems


def _key(item: dict[str, Any]) -> tuple[str, str, str]:
    return (item["kind"], item["namespace"], item["name"])


def _noun(kind: str) -> str:
    """`VirtualService` → `virtual service`."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", kind).lower()


def _plural(kind: str) -> str:
    return kind if kind.endswith("s") else kind + "s"
