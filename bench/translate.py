"""Translation time and control-plane memory for 100, 1,000 and 10,000 VirtualServices.

Time: each size runs in a fresh process that reads the folder (parse + validate),
translates it through the control plane's own call (`translate_with_gc_paused`, as
`gw controlplane` runs it), and packs it for xDS (serialize + hash, what the xDS cache
does); then translates the same snapshot again with the previous result's cache: the cost
of a change that touches one VirtualService is that plus rebuilding the one host (~60 µs).

Memory: a real `gw controlplane --dir` process serving the folder; its peak RSS (VmHWM)
once it has translated, against the same process serving an empty folder (the baseline,
measured side by side in the same run).

Goal (issue 2): 10,000 in under 1 s, RSS under 300 MB.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench import peers, report
from bench.fixtures import write_config

SIZES = (100, 1_000, 10_000)
REPEAT = 3

CHILD = r"""
import json, sys, time
from pathlib import Path
from gw.controlplane import translate_with_gc_paused
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.xds.cache import pack_resources
folder = Path(sys.argv[1]); repeat = int(sys.argv[2])
runs = []
for _ in range(repeat):
    t0 = time.perf_counter(); snapshot = DirectoryStore(folder).scan()
    t1 = time.perf_counter(); result = translate_with_gc_paused(snapshot, Options(), None)
    t2 = time.perf_counter(); pack_resources(result.xds.resources)
    t3 = time.perf_counter(); translate_with_gc_paused(snapshot, Options(), result)
    t4 = time.perf_counter()
    runs.append({"read": t1 - t0, "translate": t2 - t1, "pack": t3 - t2, "retranslate": t4 - t3})
print(json.dumps(runs))
"""


def timings(folder: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(REPEAT)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    runs = json.loads(out)
    return {
        "read_s": report.median([r["read"] for r in runs]),
        "translate_s": report.median([r["translate"] for r in runs]),
        "pack_s": report.median([r["pack"] for r in runs]),
        "retranslate_s": report.median([r["retranslate"] for r in runs]),
    }


def controlplane_rss_mb(folder: Path) -> float:
    """Peak RSS of `gw controlplane --dir folder` once its first translation is done."""
    ports = [_free_port() for _ in range(2)]
    env = {**os.environ, "START_STATS_SERVER": "1", "LOG_LEVEL": "warning"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gw",
            "controlplane",
            "--dir",
            str(folder),
            "--bind",
            "127.0.0.1",
            "--xds-port",
            str(ports[0]),
            "--debug-port",
            str(ports[1]),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                data = httpx.get(f"http://127.0.0.1:{ports[1]}/proxies", timeout=2).json()["data"]
                if data["translation"]["count"] > 0:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise TimeoutError("the control plane did not translate within 120 s")
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(peak.split()[1]) / 1024
    finally:
        # SIGTERM, not SIGINT: a benchmark started in the background by a shell inherits an
        # ignored SIGINT, and the control plane would never hear it.
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args(argv)
    started, load_start = peers.now(), peers.load_average()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        baseline = controlplane_rss_mb(empty)
        for count in (int(n) for n in args.sizes.split(",")):
            folder = Path(tmp) / f"config-{count}"
            write_config(folder, count)
            results.append(
                {
                    "virtual_services": count,
                    **timings(folder),
                    "rss_mb": controlplane_rss_mb(folder),
                    "rss_baseline_mb": baseline,
                }
            )
    rows = [
        [
            r["virtual_services"],
            r["read_s"],
            r["translate_s"],
            r["pack_s"],
            r["retranslate_s"],
            r["rss_mb"],
            r["rss_baseline_mb"],
        ]
        for r in results
    ]
    report.write(
        "translate",
        {
            "started": started,
            "load_average": {"start": load_start, "end": peers.load_average()},
            "results": results,
            "goal": {"translate_10k_s": 1.0, "rss_10k_mb": 300},
        },
        [
            "VirtualServices",
            "read (s)",
            "translate (s)",
            "pack for xDS (s)",
            "translate again, cache warm (s)",
            "control plane peak RSS (MB)",
            "same, empty folder (MB)",
        ],
        rows,
        notes=(__doc__ or "")
        + f"\nLoad average at start {load_start}, at end {peers.load_average()}.\n",
    )


if __name__ == "__main__":
    main()
