"""Generated configurations of any size: N VirtualServices with one route each.

`write_config(..., mixed=True)` makes them look more like a real gateway's, so that a
cache's best case is not all that is measured: the routes go to `UPSTREAMS` Upstreams in
turn, one VirtualService in `DELEGATE_EVERY` delegates its route to a RouteTable of its
own, and one in `TLS_EVERY` is served over TLS (a certificate in a Secret they share).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

PER_FILE = 100
UPSTREAMS = 10
DELEGATE_EVERY = 20
TLS_EVERY = 50

UPSTREAM = """---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: bench}}
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
        routeAction: {{single: {{upstream: {{name: {upstream}}}}}}}
"""

TLS_VS = """---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: vs-{i}, namespace: bench}}
spec:
  sslConfig:
    secretRef: {{name: bench-tls, namespace: bench}}
    sniDomains: [host-{i}.tls.bench.example.com]
  virtualHost:
    domains: [host-{i}.tls.bench.example.com]
    routes:
      - matchers: [{{prefix: /{marker}}}]
        routeAction: {{single: {{upstream: {{name: {upstream}}}}}}}
"""

#: The built-in HTTP Gateway written down, with a Server header of its own (`serverName`):
#: a change to it is a change to the listener every plain VirtualService is served on.
GATEWAY = """---
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: gateway-proxy, namespace: gw-system}}
spec:
  bindAddress: '::'
  bindPort: 8080
  httpGateway:
    options:
      httpConnectionManagerSettings: {{serverName: {server}}}
  proxyNames: [gateway-proxy]
  ssl: false
"""
DELEGATING_VS = """---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: vs-{i}, namespace: bench}}
spec:
  virtualHost:
    domains: [host-{i}.bench.example.com]
    routes:
      - matchers: [{{prefix: /}}]
        delegateAction: {{ref: {{name: rt-{i}, namespace: bench}}}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {{name: rt-{i}, namespace: bench}}
spec:
  routes:
    - matchers: [{{prefix: /{marker}}}]
      routeAction: {{single: {{upstream: {{name: {upstream}}}}}}}
"""

SECRET = """---
apiVersion: v1
kind: Secret
metadata: {{name: bench-tls, namespace: bench}}
type: kubernetes.io/tls
stringData:
  tls.crt: |
{crt}
  tls.key: |
{key}
"""


def vs_documents(start: int, stop: int, marker: str = "r", mixed: bool = False) -> str:
    """The documents of VirtualServices `start` to `stop` (and their RouteTables)."""
    out = []
    for i in range(start, stop):
        if not mixed:
            out.append(VS.format(i=i, marker=marker, upstream="backend"))
            continue
        upstream = upstream_name(i % UPSTREAMS)
        if i % TLS_EVERY == 7:
            template = TLS_VS
        elif i % DELEGATE_EVERY == 2:
            template = DELEGATING_VS
        else:
            template = VS
        out.append(template.format(i=i, marker=marker, upstream=upstream))
    return "".join(out)


def upstream_name(n: int) -> str:
    return "backend" if n == 0 else f"backend-{n}"


def write_config(folder: Path, count: int, upstream_port: int = 9, *, mixed: bool = False) -> None:
    """`count` VirtualServices in files of PER_FILE documents, plus the upstream(s) (and,
    `mixed`, the TLS secret)."""
    folder.mkdir(parents=True, exist_ok=True)
    upstreams = UPSTREAMS if mixed else 1
    (folder / "upstream.yaml").write_text(
        "".join(
            UPSTREAM.format(name=upstream_name(n), port=upstream_port) for n in range(upstreams)
        )
    )
    if mixed:
        (folder / "secret.yaml").write_text(_secret())
    for start in range(0, count, PER_FILE):
        stop = min(start + PER_FILE, count)
        (folder / f"vs-{start:06d}.yaml").write_text(vs_documents(start, stop, mixed=mixed))


def file_of(i: int) -> str:
    """The file VirtualService `i` is written in."""
    return f"vs-{i - i % PER_FILE:06d}.yaml"


def _secret() -> str:
    """A self-signed certificate for the TLS hosts, made by openssl (valid ten years). Its
    key is RSA 2048, the most common kind (and the dearest to check: loading one costs
    about 30 ms, where a P-256 key, which the fixture used before, costs 16 µs)."""
    with tempfile.TemporaryDirectory() as tmp:
        crt, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "3650",
                "-subj",
                "/CN=*.tls.bench.example.com",
                "-addext",
                "subjectAltName=DNS:*.tls.bench.example.com",
                "-keyout",
                str(key),
                "-out",
                str(crt),
            ],
            check=True,
            capture_output=True,
        )
        return SECRET.format(crt=_indented(crt.read_text()), key=_indented(key.read_text()))


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines())
