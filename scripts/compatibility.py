"""Measure which fields of the established gateway's API gw understands, and write
docs/compatibility.md.

Usage (the CRDs come from a fetched copy of the established gateway's repository, its
`install/helm/gloo/crds/` folder; they are read, never committed):

    .venv/bin/python scripts/compatibility.py --crds DIR [--out docs/compatibility.md]

Every leaf field of each kind's CRD schema (group names neutralised as REFERENCE.md §0 says,
`kube` fields as `orch`) is probed on its own: a small valid manifest of the kind gets that
field with a sample value (the last of an enumeration; required fields beside it get
values of their type), and gw parses and translates it as `gwctl validate` would. A
field is "not supported" when gw answers with an unknown-field error, a "not supported"
finding, or a warning that the field has no effect, on the field or on one of its parents;
"accepted, no effect" when gw's model only keeps it as untyped data and no finding says so
(a defect to fix); "supported" otherwise (the field is read; a complaint about the sample
value is fine). Subtrees with one verdict are collapsed into one row.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gw import api  # noqa: E402
from gw.snapshot import Snapshot  # noqa: E402
from gw.translator.translation import translate  # noqa: E402

#: The kinds measured: established CRD file name part -> gw kind.
KINDS = {
    "Gateway": "Gateway",
    "VirtualService": "VirtualService",
    "RouteTable": "RouteTable",
    "VirtualHostOption": "VirtualHostOption",
    "RouteOption": "RouteOption",
    "Upstream": "Upstream",
    "UpstreamGroup": "UpstreamGroup",
    "Settings": "Settings",
    "AuthConfig": "AuthConfig",
    "MatchableHttpGateway": "MatchableHttpGateway",
    "MatchableTcpGateway": "MatchableTcpGateway",
    "HttpListenerOption": "HttpListenerOption",
    "ListenerOption": "ListenerOption",
}

#: A route's action in the base manifests: it forwards, so that route options which act on
#: forwarded requests only are judged where they act (the Upstream need not exist).
_FORWARD = {"single": {"upstream": {"name": "probe"}}}

#: A minimal manifest spec per kind that gw accepts; probes are merged into it.
BASE: dict[str, dict[str, Any]] = {
    "Gateway": {"bindPort": 18080, "httpGateway": {}},
    "VirtualService": {
        "virtualHost": {
            "domains": ["probe.test"],
            "routes": [{"matchers": [{"prefix": "/"}], "routeAction": _FORWARD}],
        }
    },
    "RouteTable": {"routes": [{"matchers": [{"prefix": "/"}], "routeAction": _FORWARD}]},
    "VirtualHostOption": {"options": {}},
    "RouteOption": {"options": {}},
    "Upstream": {"static": {"hosts": [{"addr": "127.0.0.1", "port": 9}]}},
    "UpstreamGroup": {"destinations": []},
    "Settings": {},
    "AuthConfig": {"configs": []},
    "MatchableHttpGateway": {"httpGateway": {}},
    "MatchableTcpGateway": {
        "tcpGateway": {
            "tcpHosts": [{"name": "probe", "destination": {"forwardSniClusterName": {}}}]
        }
    },
    "HttpListenerOption": {"options": {}},
}

#: Probes under these fields start from a minimal valid value of the field, so that they
#: reach the translator rather than stop at the required fields the probe does not set.
FIELD_BASE: dict[tuple[str, ...], dict[str, Any]] = {
    # The bucket's switches shape the gateway-wide bucket: probed with one.
    ("httpGateway", "options", "httpLocalRatelimit"): {"defaultLimit": {"maxTokens": 1}},
    ("configs", "[]", "oauth2", "oidcAuthorizationCode"): {
        "appUrl": "https://app.probe.test",
        "callbackPath": "/callback",
        "clientId": "probe",
        "issuerUrl": "https://idp.probe.test",
        "disableClientSecret": True,
    },
    ("configs", "[]", "apiKeyAuth"): {"labelSelector": {"probe": "probe"}},
    ("configs", "[]", "passThroughAuth", "grpc"): {"address": "auth.probe.test:9001"},
    ("configs", "[]", "passThroughAuth", "http"): {"url": "http://auth.probe.test/"},
}

#: Keys of which a manifest holds one: a probe of one drops the base's other.
ONEOFS = (
    {"httpGateway", "tcpGateway", "hybridGateway"},
    {"static", "orch", "aws", "awsEc2", "azure", "consul", "gcp", "pipe", "ai"},
    {"routeAction", "directResponseAction", "redirectAction", "delegateAction", "graphqlApiRef"},
    {"prefix", "exact", "regex", "connectMatcher"},
)

#: Read-only fields the orchestrator writes: not part of what a user sets.
STATUS_FIELDS = {"namespacedStatuses", "metadata"}

#: The probe's value as gw quotes it back in a parse error.
ECHOED_INPUT = re.compile(r" \(got .*\)$")
#: How many rounds of filling in required fields a probe gets.
MAX_FILLS = 4

UNSUPPORTED = re.compile(r"unknown field|not supported|no effect|not acted on|is ignored")


@dataclass(frozen=True, slots=True)
class Verdict:
    state: str  # "supported" | "not supported" | "accepted, no effect"
    detail: str = ""

    def __str__(self) -> str:
        if not self.detail:
            return self.state
        # A message that already says "not supported: ..." is not said twice.
        return f"{self.state}: {self.detail.removeprefix(self.state + ': ')}"


def neutral(name: str) -> str:
    """A field name as gw spells it (REFERENCE.md §0)."""
    return "orch" if name == "kube" else name


def leaves(
    schema: dict[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every leaf field of a CRD schema: (path, schema); `[]` marks a list element."""
    props = schema.get("properties")
    if props:
        for key in sorted(props):
            yield from leaves(props[key], (*path, neutral(key)))
        return
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and items.get("properties"):
        yield from leaves(items, (*path, "[]"))
        return
    yield path, schema


def sample(schema: dict[str, Any], name: str) -> Any:
    """A plausible value for a leaf: booleans true and the last value of an enumeration
    (refusals usually trigger on what is not the default)."""
    if schema.get("enum"):
        return schema["enum"][-1]
    kind = schema.get("type")
    if kind == "boolean":
        return True
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 1.0
    if kind == "array":
        items = schema.get("items") or {}
        return [sample(items, name)]
    if kind == "object" or schema.get("x-kubernetes-preserve-unknown-fields"):
        return {}
    if re.search(r"(?i)timeout|interval|duration|delay|ttl|time$|rate$|age$", name):
        return "1s"
    return "x"


def probe_spec(kind: str, path: tuple[str, ...], value: Any) -> dict[str, Any]:
    spec = copy.deepcopy(BASE.get(kind, {}))
    node: Any = spec
    for index, key in enumerate(path):
        last = index == len(path) - 1
        if key == "[]":
            continue
        if isinstance(node, list):
            if not node:
                node.append({})
            node = node[0]
        for family in ONEOFS:
            if key in family:
                for other in family - {key}:
                    node.pop(other, None)
        if last:
            node[key] = value
        else:
            nxt = path[index + 1]
            if key not in node or not isinstance(node[key], dict | list):
                node[key] = (
                    [] if nxt == "[]" else copy.deepcopy(FIELD_BASE.get(path[: index + 1], {}))
                )
            node = node[key]
    return spec


def group_of(crd: dict[str, Any]) -> str:
    group = crd["spec"]["group"]
    return (
        group.replace("enterprise.gloo.solo.io", "enterprise.gw.vendor.io")
        .replace("gloo.solo.io", "gw.vendor.io")
        .replace("solo.io", "vendor.io")
    )


def judge(kind: str, api_version: str, path: tuple[str, ...], value: Any) -> Verdict:
    spec = probe_spec(kind, path, value)
    doc = {
        "apiVersion": api_version,
        "kind": kind,
        # Settings are read only as gw-system.default: any other name is ignored whole.
        "metadata": {
            "name": "default" if kind == "Settings" else "probe",
            "namespace": "gw-system",
        },
        "spec": spec,
    }
    wanted = "spec." + ".".join(p for p in path if p != "[]")
    for _ in range(MAX_FILLS):
        try:
            resource = api.parse_document(doc)
            break
        except api.ManifestError as exc:
            for problem in exc.problems:
                if problem.field == "kind":  # a kind gw does not read
                    return Verdict("not supported", problem.message)
                if _related(problem.field, wanted) and UNSUPPORTED.search(problem.message):
                    # Without the echoed sample value, so that a refused subtree is one row.
                    return Verdict("not supported", ECHOED_INPUT.sub("", problem.message))
            if not _fill_missing(kind, doc, exc.problems):
                return _untyped(kind, path)
        except api.IgnoredDocument as exc:
            return Verdict("not supported", str(exc))
    else:
        return _untyped(kind, path)
    snapshot = Snapshot(resources={resource.key: resource}, errors=())
    result = translate(snapshot)
    for _, report in result.reports.items():
        for finding in (*report.errors, *report.warnings):
            if _related(finding.field, wanted) and UNSUPPORTED.search(finding.message):
                return Verdict("not supported", finding.message)
    return _untyped(kind, path)


def _fill_missing(kind: str, doc: dict[str, Any], problems: list[api.Problem]) -> bool:
    """Give the required fields the probe left out (a `ref.name` beside the probed
    `ref.namespace`, an orch upstream's service) a value of their type, so that the probed
    field reaches the translator. False when nothing was missing."""
    model = api.kind_for(kind)
    missing = [p.field for p in problems if p.message == "required field is missing"]
    if model is None or not missing:
        return False
    schema = model.model_json_schema(by_alias=True)
    for field in missing:
        parts = [int(p) if p.isdigit() else p for p in re.split(r"\.|\[|\]\.?", field) if p]
        node: Any = doc
        for part in parts[:-1]:
            node = node[part]
        node[parts[-1]] = sample(_schema_at(schema, parts), str(parts[-1]))
    return True


def _schema_at(schema: dict[str, Any], parts: list[str | int]) -> dict[str, Any]:
    """The JSON schema of the model field at `parts` (list indexes step into items)."""
    node: dict[str, Any] = schema
    for part in parts:
        node = _resolve(schema, node)
        node = node.get("items", {}) if isinstance(part, int) else node["properties"][part]
    node = _resolve(schema, node)
    return {"type": "integer"} if node.get("type") == "integer" else node


def _gw_sample(kind: str, path: tuple[str, ...], crd_schema: dict[str, Any]) -> Any:
    """The CRD's sample, or the last value gw's model enumerates where the CRD only says
    "a string" (its enums are `x-kubernetes-int-or-string`)."""
    model = api.kind_for(kind)
    if model is not None and not crd_schema.get("enum"):
        schema = model.model_json_schema(by_alias=True)
        parts: list[str | int] = ["spec", *(0 if p == "[]" else p for p in path)]
        try:
            found = _schema_at(schema, parts)
        except (KeyError, TypeError):
            found = {}
        if found.get("enum"):
            return found["enum"][-1]
    return sample(crd_schema, path[-1])


def _related(field: str, wanted: str) -> bool:
    field = re.sub(r"\[\d+\]", "", field)
    return wanted == field or wanted.startswith(field + ".") or field.startswith(wanted + ".")


def _untyped(kind: str, path: tuple[str, ...]) -> Verdict:
    """`accepted, no effect` when gw's model keeps the field (or a parent) as plain data."""
    model = api.kind_for(kind)
    if model is None:
        return Verdict("not supported", f"{kind} is not a gw kind")
    schema = model.model_json_schema(by_alias=True)
    node: dict[str, Any] = schema["properties"]["spec"]
    for key in path:
        node = _resolve(schema, node)
        if key == "[]":
            node = node.get("items", {})
            continue
        props = node.get("properties")
        if props is None:
            return (
                Verdict("accepted, no effect", "kept as untyped data")
                if _is_any(node)
                else Verdict("supported")
            )
        if key not in props:
            return Verdict("supported")
        node = props[key]
    if _is_any(_resolve(schema, node)):
        return Verdict("accepted, no effect", "kept as untyped data")
    return Verdict("supported")


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while True:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].split("/")[-1]]
        elif "anyOf" in node:
            typed = [n for n in node["anyOf"] if n.get("type") != "null"]
            node = typed[0] if typed else {}
        else:
            return node


def _is_any(node: dict[str, Any]) -> bool:
    """An object of anything (`dict[str, Any]`), not a typed map, nor one gw reads whole by
    design (marked `x-gw-free-form`, e.g. an access log's `jsonFormat`)."""
    extra = node.get("additionalProperties")
    free_form = node.get("x-gw-free-form") is True
    return (
        node.get("type") == "object"
        and "properties" not in node
        and extra in (True, {})
        and not free_form
    )


def collapse(rows: list[tuple[tuple[str, ...], Verdict]]) -> list[tuple[str, Verdict]]:
    """One row per largest subtree whose leaves share a verdict."""
    out: list[tuple[str, Verdict]] = []

    def visit(prefix: tuple[str, ...], group: list[tuple[tuple[str, ...], Verdict]]) -> None:
        verdicts = {v for _, v in group}
        if len(verdicts) == 1 or all(len(p) == len(prefix) for p, _ in group):
            out.append((".".join(prefix).replace(".[]", "[]"), group[0][1]))
            return
        children: dict[str, list[tuple[tuple[str, ...], Verdict]]] = {}
        for path, verdict in group:
            children.setdefault(path[len(prefix)], []).append((path, verdict))
        for key in sorted(children):
            visit((*prefix, key), children[key])

    visit(("spec",), [(("spec", *p), v) for p, v in rows])
    return out


def measure(crd_dir: Path) -> dict[str, list[tuple[str, Verdict]]]:
    tables: dict[str, list[tuple[str, Verdict]]] = {}
    for file in sorted(crd_dir.glob("*.yaml")):
        crd = yaml.safe_load(file.read_text())
        if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
            continue
        kind = KINDS.get(crd["spec"]["names"]["kind"])
        if kind is None:
            continue
        version = crd["spec"]["versions"][0]
        spec = version["schema"]["openAPIV3Schema"].get("properties", {}).get("spec")
        if not spec:
            continue
        api_version = f"{group_of(crd)}/{version['name']}"
        rows = [
            (path, judge(kind, api_version, path, _gw_sample(kind, path, schema)))
            for path, schema in leaves(spec)
            if path and path[0] not in STATUS_FIELDS
        ]
        tables[kind] = collapse(rows)
    return tables


#: Fields gw reads that the established API does not have (kind, field, what gw does).
EXTENSIONS = (
    (
        "Settings",
        "spec.extauth.sessionPass.ttl",
        "off when absent; 3s to 5m: Envoy decides a logged-in OIDC session's requests "
        "itself for that long between two checks (docs/extauth.md#session-passes)",
    ),
)


def render(tables: dict[str, list[tuple[str, Verdict]]]) -> str:
    lines = [
        "# Compatibility with the established gateway's API",
        "",
        "Generated by `scripts/compatibility.py` from the established gateway's CRD schemas:",
        "every field is probed on its own through gw's parser and translator (what `gwctl",
        "validate` does). `supported`: gw reads the field and acts on it; `not supported`:",
        "gw refuses it with the message shown; `accepted, no effect`: gw keeps it as untyped",
        "data without acting on it (a defect: each such row is being fixed). Subtrees with one",
        "verdict are one row.",
        "",
        "| kind | fields | supported | not supported | accepted, no effect |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, rows in tables.items():
        counts = {
            s: sum(1 for _, v in rows if v.state == s)
            for s in ("supported", "not supported", "accepted, no effect")
        }
        cells = [kind, len(rows), *counts.values()]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    for kind, rows in tables.items():
        lines += ["", f"## {kind}", "", "| field | gw |", "|---|---|"]
        for path, verdict in rows:
            detail = str(verdict).replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{path}` | {detail} |")
    lines += ["", "## gw extensions", "", "Fields gw reads beyond the established API.", ""]
    lines += ["| kind | field | gw |", "|---|---|---|"]
    lines += [f"| {kind} | `{path}` | {what} |" for kind, path, what in EXTENSIONS]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crds", type=Path, required=True, help="folder of the established CRDs")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "compatibility.md")
    args = parser.parse_args()
    args.out.write_text(render(measure(args.crds)))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
