"""A corpus of hostile manifest files: what someone who can write to the served folder (or
a tool gone wrong) may put there. Each must cost the control plane little, end as an input
error or a `Rejected` status naming the rule it breaks, and leave everything else serving.

`CORPUS` maps a case name to a `Hostile`: the files to write and, for each resource the
case names, a fragment of the message its status (or the file's input error) must carry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

UPSTREAM = """apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: {namespace}}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: 9000}}]}}}}
"""


@dataclass(frozen=True, slots=True)
class Hostile:
    #: file name → content
    files: dict[str, str]
    #: `Kind namespace.name` → fragment of its Rejected status; files without a resource
    #: to blame are under their file name (an input error of the file).
    expect: dict[str, str]
    #: The resource the hostile file replaces, when it stands in for a good version (its
    #: last accepted version must keep serving).
    replaces: str | None = None


def alias_bomb(levels: int, where: str) -> str:
    """Nine aliases per level: 9**levels values once expanded, from a few hundred bytes."""
    anchors = ['  l0: &l0 ["xxxxxxxx", "xxxxxxxx", "xxxxxxxx", "xxxxxxxx", "xxxxxxxx",'
               ' "xxxxxxxx", "xxxxxxxx", "xxxxxxxx", "xxxxxxxx"]']  # fmt: skip
    for i in range(1, levels):
        anchors.append(f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]")
    return "\n".join(anchors) + f"\n{where}\n"


def bomb_in_typed_field(levels: int) -> str:
    """The bomb where a list of strings belongs: validation would report (and print) each
    expanded element."""
    return f"""apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: web, namespace: default}}
bomb:
{alias_bomb(levels, "")}spec:
  virtualHost:
    domains: [web.example.com]
  sslConfig:
    sniDomains: *l{levels - 1}
"""


def bomb_in_free_form_field(levels: int) -> str:
    """The bomb inside a field kept as plain data (Settings `gateway`): valid to a schema,
    expanded by whatever prints the resource (`/snapshots/input`, `gwctl get -o yaml`)."""
    return f"""apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  gateway:
{alias_bomb(levels, "").replace("  l", "    l")}    all: *l{levels - 1}
"""


def deep_json(depth: int) -> str:
    """A resource whose free-form field nests `depth` objects."""
    nested = "1"
    for _ in range(depth):
        nested = '{"a": ' + nested + "}"
    return (
        '{"apiVersion": "gw.vendor.io/v1", "kind": "Settings", '
        '"metadata": {"name": "default", "namespace": "gw-system"}, '
        '"spec": {"gateway": ' + nested + "}}"
    )


def deep_yaml(depth: int) -> str:
    nested = "[" * depth + "]" * depth
    return f"""apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  gateway: {{deep: {nested}}}
"""


def huge_file(size: int) -> str:
    """One small valid resource padded with a comment to `size` bytes."""
    head = UPSTREAM.format(name="huge", namespace="default")
    return head + "# " + "x" * (size - len(head) - 3) + "\n"


def many_documents(stop: int, start: int = 0, prefix: str = "u") -> str:
    """Upstreams `<prefix><start>` to `<prefix><stop - 1>`, one document each."""
    return "".join(
        f"---\n{UPSTREAM.format(name=f'{prefix}{i}', namespace='default')}"
        for i in range(start, stop)
    )


def long_scalar_aliases(kib: int, times: int) -> str:
    """One long string, repeated by aliases: few values, many bytes once expanded."""
    return f"""apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  gateway:
    long: &long "{"y" * (kib * 1024)}"
    copies: [{", ".join(["*long"] * times)}]
"""


def recursive_alias() -> str:
    return """apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {name: default, namespace: gw-system}
spec:
  gateway:
    loop: &loop [1, *loop]
"""


BAD_NAMES = {
    "../x": "DNS-1123",
    "a/b": "DNS-1123",
    "Upper": "DNS-1123",
    "under_score": "DNS-1123",
    "x" * 254: "no more than 253 characters",
}
BAD_NAMESPACES = {"team.payments": "DNS-1123 label", "Team": "DNS-1123", "n" * 64: "63 characters"}


def bad_names() -> Hostile:
    docs = [UPSTREAM.format(name=json.dumps(n), namespace="default") for n in BAD_NAMES]
    docs += [UPSTREAM.format(name="fine", namespace=json.dumps(ns)) for ns in BAD_NAMESPACES]
    expect = {f"Upstream default.{n}": rule for n, rule in BAD_NAMES.items()}
    expect |= {f"Upstream {ns}.fine": rule for ns, rule in BAD_NAMESPACES.items()}
    return Hostile(files={"names.yaml": "---\n".join(docs)}, expect=expect)


MAX_FILE_BYTES = 4 * 1024 * 1024

LIMITS = """apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  directoryConfigSource: {{{field}}}
"""

CORPUS: dict[str, Hostile] = {
    "alias-bomb-typed-field": Hostile(
        files={"web.yaml": bomb_in_typed_field(8)},
        expect={"VirtualService default.web": "maxAliasExpansions"},
        replaces="VirtualService default.web",
    ),
    "alias-bomb-free-form-field": Hostile(
        files={"settings.yaml": bomb_in_free_form_field(9)},
        expect={"Settings gw-system.default": "maxAliasExpansions"},
    ),
    "alias-of-a-long-string": Hostile(
        files={"settings.yaml": long_scalar_aliases(kib=256, times=100)},
        expect={"Settings gw-system.default": "maxAliasExpansions"},
    ),
    "recursive-alias": Hostile(
        files={"settings.yaml": recursive_alias()},
        expect={"Settings gw-system.default": "recursive"},
    ),
    "deep-json": Hostile(
        files={"deep.json": deep_json(2000)},
        expect={"deep.json": "maxNestingDepth"},
    ),
    "deep-json-under-python-limit": Hostile(
        files={"deep.json": deep_json(150)},
        expect={"Settings gw-system.default": "maxNestingDepth"},
    ),
    "deep-yaml": Hostile(
        files={"deep.yaml": deep_yaml(150)},
        expect={"Settings gw-system.default": "maxNestingDepth"},
    ),
    "huge-file": Hostile(
        files={"huge.yaml": huge_file(MAX_FILE_BYTES + 1)},
        expect={"huge.yaml": "maxFileBytes"},
    ),
    # The limit lowered by Settings (the default, 10,000, is the same check).
    "many-documents": Hostile(
        files={
            "settings.yaml": LIMITS.format(field="maxDocuments: 100"),
            "many.yaml": many_documents(101),
        },
        expect={"many.yaml": "maxDocuments"},
    ),
    "bad-names": bad_names(),
}
