"""Generated configurations of any size: N VirtualServices with one route each."""

from __future__ import annotations

from pathlib import Path

PER_FILE = 100

UPSTREAM = """apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: backend, namespace: bench}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {port}}}]
"""

VS = """---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: vs-{i}, namespace: bench}}
spec:
  virtualHost:
    domains: [host-{i}.bench.example.com]
    routes:
      - matchers: [{{prefix: /{marker}}}]
        routeAction: {{single: {{upstream: {{name: backend}}}}}}
"""


def vs_documents(start: int, stop: int, marker: str = "r") -> str:
    return "".join(VS.format(i=i, marker=marker) for i in range(start, stop))


def write_config(folder: Path, count: int, upstream_port: int = 9) -> None:
    """`count` VirtualServices in files of PER_FILE documents, plus one upstream."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "upstream.yaml").write_text(UPSTREAM.format(port=upstream_port))
    for start in range(0, count, PER_FILE):
        stop = min(start + PER_FILE, count)
        (folder / f"vs-{start:06d}.yaml").write_text(vs_documents(start, stop))
