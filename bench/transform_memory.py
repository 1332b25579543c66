"""What routes with Lua transformations cost Envoy: memory, configuration size, start.

For each size N, two `gw up` run one after the other: N VirtualServices of one route
answering directly (plain), and the same N with a request template that Envoy's header
filters cannot do (an `{% if %}`), so that each route runs gw's Lua transformation
runtime with rules of its own. Once the last host answers, every host is asked once (each
route's rules are compiled when a request first needs them), then read from Envoy's admin:
`/memory` (`allocated`, `heap_size`) and the size of its route configurations
(`/config_dump?resource=dynamic_route_configs`). Also reported: the seconds from the
start of `gw up` to the last host answering.

Run from the repository root: `python -m bench.transform_memory [--sizes 1000,3000]`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.processes import GwUp
from tests.support.wait import wait_until

from bench import peers, report

PLAIN = """---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: vs-{i}, namespace: bench}}
spec:
  virtualHost:
    domains: [h{i}.bench.test]
    routes:
      - matchers: [{{prefix: /}}]
        directResponseAction: {{status: 200}}
"""
TEMPLATE = """        options:
          transformations:
            requestTransformation:
              transformationTemplate:
                headers:
                  x-a: {{text: '{{% if header("x") == "{i}" %}}yes{{% else %}}no{{% endif %}}'}}
"""
SCENARIOS = ("plain", "lua")


def folder(work: Path, scenario: str, count: int) -> Path:
    out = work / f"{scenario}-{count}"
    out.mkdir()
    document = PLAIN + (TEMPLATE if scenario == "lua" else "")
    (out / "hosts.yaml").write_text("".join(document.format(i=i) for i in range(count)))
    return out


def measure(work: Path, scenario: str, count: int) -> dict[str, Any]:
    config = folder(work, scenario, count)
    started = time.monotonic()
    quiet = ("--envoy-log-level", "error", "--log-level", "warning")
    gw = GwUp(config, work / f"home-{scenario}-{count}", *quiet)
    try:
        last = {"Host": f"h{count - 1}.bench.test"}
        wait_until(
            lambda: httpx.get(gw.url + "/", headers=last).status_code == 200,
            timeout=120 + count / 50,
            what="the last host to answer",
        )
        served = time.monotonic() - started
        with httpx.Client() as client:
            for i in range(count):
                answer = client.get(gw.url + "/", headers={"Host": f"h{i}.bench.test"})
                if answer.status_code != 200:
                    raise RuntimeError(f"{scenario} host {i} answered {answer.status_code}")
        memory = httpx.get(gw.proxy_admin_url + "/memory", timeout=10).json()
        dump = httpx.get(
            gw.proxy_admin_url + "/config_dump?resource=dynamic_route_configs", timeout=60
        )
        return {
            "served_s": round(served, 2),
            "allocated_mib": round(int(memory["allocated"]) / 2**20, 1),
            "heap_mib": round(int(memory["heap_size"]) / 2**20, 1),
            "route_config_mb": round(len(dump.content) / 1e6, 2),
        }
    finally:
        gw.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,3000")
    args = parser.parse_args()
    started, load_start = peers.now(), peers.load_average()
    results = []
    with tempfile.TemporaryDirectory(prefix="gw-bench-transform-memory-") as tmp:
        for count in (int(s) for s in args.sizes.split(",")):
            found = {s: measure(Path(tmp), s, count) for s in SCENARIOS}
            per_route = (found["lua"]["allocated_mib"] - found["plain"]["allocated_mib"]) / count
            results.append({"routes": count, **found, "kib_per_lua_route": per_route * 1024})
            print(results[-1], flush=True)
    rows = [
        (
            r["routes"],
            *(f"{r[s]['allocated_mib']} / {r[s]['heap_mib']}" for s in SCENARIOS),
            f"{r['kib_per_lua_route']:.1f}",
            *(r[s]["route_config_mb"] for s in SCENARIOS),
            *(r[s]["served_s"] for s in SCENARIOS),
        )
        for r in results
    ]
    report.write(
        "transform_memory",
        {
            "started": started,
            "load_average": {"start": load_start, "end": peers.load_average()},
            "results": results,
        },
        [
            "routes",
            "Envoy allocated / heap MiB, plain",
            "same, Lua transformation",
            "KiB per Lua route",
            "route configurations MB, plain",
            "same, Lua",
            "served after s, plain",
            "same, Lua",
        ],
        rows,
        notes=__doc__.split("\n\n")[1],
    )


if __name__ == "__main__":
    main()
