"""Translation time and control-plane memory for 1,000 to 100,000 VirtualServices.

The folder is the mixed fixture (`fixtures.py`: ten Upstreams, one VirtualService in 20
delegating to a RouteTable, one in 50 over TLS), so that what is measured is not only a
cache's best case.

Cold start: each size runs in a fresh process that reads the folder (parse + validate;
with the control plane's worker processes for a large folder, `store/reading.py`, unless
`--read-in-one-process`), translates it through the control plane's own call
(`translate_with_gc_paused`, as `gw controlplane` runs it, with its garbage-collector
policy: `gw.collector.freezing`), and packs it for xDS (serialize + hash, what the xDS
cache does). Then it makes what a full translation leaves for the next one (its stage-1
cache: the control plane publishes first, then makes it, `ControlPlane._prepare_next`),
timed on its own: "translate" is what the first configuration waits for, and
"translate" + "cache for the next edit" is all the translation's work.

After a change, in the same process, `EDITS` times each (medians reported):
- one VirtualService edited (its route's prefix changes; the file holding it and 99 others
  is rewritten): the store reads the changed file (`scan` with the watcher's path), the
  translation runs with the previous result's cache, and the xDS is packed from the last
  packing (only what changed is serialized again);
- one Upstream edited (its port), which a tenth of the VirtualServices route to: the wide
  change (the hosts that route there read of it only what does not change: none is built
  again, `destinations.destination_view`);
- the HTTP Gateway edited (its `serverName`; the folder has it written down from the
  start): the listener every plain VirtualService is served on gets a new Server header
  (no host depends on it: `incremental.placing`, only the Listener message is built).
The "change" columns are read + translate + pack, the control plane's share of
propagation (the rest is the watcher, the push and Envoy: `propagation.py`).

Memory: a real `gw controlplane --dir` process serving the folder; its peak RSS (VmHWM)
once it has translated, against the same process serving an empty folder (the baseline,
measured side by side in the same run).

Goals (issue 20): 100,000 translated in under 3 s, control-plane peak RSS under 1 GiB.
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
from tests.support.ports import free_port

from bench import peers, report
from bench.fixtures import write_config

SIZES = (1_000, 10_000, 100_000)
EDITS = 5

CHILD = r"""
import gc, json, statistics, sys, time
from pathlib import Path
from bench.fixtures import GATEWAY, PER_FILE, UPSTREAM, UPSTREAMS, file_of, upstream_name
from bench.fixtures import vs_documents
from gw.controlplane import prepare_with_gc_paused, translate_with_gc_paused
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.xds.cache import pack_resources

folder, count, edits = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
read_workers = sys.argv[4] == "workers"
from gw import collector; collector.freezing(True)  # as gw controlplane runs
(folder / "gateway.yaml").write_text(GATEWAY.format(server="edge"))  # written down, to edit
store = DirectoryStore(folder, read_workers=read_workers)  # as gw controlplane reads
t0 = time.perf_counter(); snapshot = store.scan()
t1 = time.perf_counter()
result = translate_with_gc_paused(snapshot, Options(now=time.time()), None)
t2 = time.perf_counter(); packed = pack_resources(result.xds.resources)
t3 = time.perf_counter(); prepare_with_gc_paused(result)
t4 = time.perf_counter()
gc.freeze()
out = {"read": t1 - t0, "translate": t2 - t1, "pack": t3 - t2, "prepare": t4 - t3}


def change(path, text):
    global snapshot, result, packed
    path.write_text(text)
    now = time.time_ns() + 10**9
    import os; os.utime(path, ns=(now, now))  # a new stamp even within the clock's step
    a = time.perf_counter(); snapshot = store.scan([str(path)])
    b = time.perf_counter()
    result = translate_with_gc_paused(snapshot, Options(now=time.time()), result)
    c = time.perf_counter(); packed = pack_resources(result.xds.resources, packed)
    d = time.perf_counter()
    prepare_with_gc_paused(result)  # after publishing, as the control plane does
    return {"read": b - a, "translate": c - b, "pack": d - c, "total": d - a,
            "incremental": result.restated is not None}


one, wide, gateway = [], [], []
middle = count // 2 + 3  # a plain VirtualService (not TLS, not delegating)
start = middle - middle % PER_FILE
stop = min(start + PER_FILE, count)
for n in range(edits):
    text = (vs_documents(start, middle, mixed=True)
            + vs_documents(middle, middle + 1, marker=f"edit{n}", mixed=True)
            + vs_documents(middle + 1, stop, mixed=True))
    one.append(change(folder / file_of(middle), text))
    ports = [9] * UPSTREAMS
    ports[3] = 1000 + n
    wide.append(change(folder / "upstream.yaml", "".join(
        UPSTREAM.format(name=upstream_name(k), port=ports[k]) for k in range(UPSTREAMS))))
for n in range(edits):
    gateway.append(change(folder / "gateway.yaml", GATEWAY.format(server=f"edge-{n}")))
median = lambda runs, key: statistics.median(r[key] for r in runs)
for name, runs in (("one", one), ("wide", wide), ("gateway", gateway)):
    for key in ("read", "translate", "pack", "total"):
        out[f"{name}_{key}"] = median(runs, key)
    out[f"{name}_incremental"] = all(r["incremental"] for r in runs)
import resource
out["child_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def timings(folder: Path, count: int, read_workers: bool = True) -> dict[str, float]:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(folder),
            str(count),
            str(EDITS),
            "workers" if read_workers else "one process",
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout
    return {
        f"{k}_s" if not k.endswith(("_mb", "_incremental")) else k: v
        for k, v in json.loads(out).items()
    }


def controlplane_rss_mb(folder: Path, count: int = 0) -> float:
    """Peak RSS of `gw controlplane --dir folder` once its first translation is done."""
    ports = [free_port() for _ in range(2)]
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
        deadline = time.monotonic() + 120 + count / 200  # 100,000 take minutes on 2 cores
        while time.monotonic() < deadline:
            try:
                data = httpx.get(f"http://127.0.0.1:{ports[1]}/proxies", timeout=2).json()["data"]
                if data["translation"]["count"] > 0:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise TimeoutError("the control plane did not translate in time")
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(peak.split()[1]) / 1024
    finally:
        # SIGTERM, not SIGINT: a benchmark started in the background by a shell inherits an
        # ignored SIGINT, and the control plane would never hear it.
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--name", default="translate", help="results file name")
    parser.add_argument(
        "--read-in-one-process",
        action="store_true",
        help="read without worker processes (as before they were used: the side-by-side)",
    )
    args = parser.parse_args(argv)
    started, load_start = peers.now(), peers.load_average()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        baseline = controlplane_rss_mb(empty)
        for count in (int(n) for n in args.sizes.split(",")):
            folder = Path(tmp) / f"config-{count}"
            write_config(folder, count, mixed=True)
            results.append(
                {
                    "virtual_services": count,
                    **timings(folder, count, not args.read_in_one_process),
                    "rss_mb": controlplane_rss_mb(folder, count),
                    "rss_baseline_mb": baseline,
                }
            )
    rows = [
        [
            r["virtual_services"],
            r["read_s"],
            r["translate_s"],
            r["prepare_s"],
            r["pack_s"],
            _ms(r["one_read_s"]),
            _ms(r["one_translate_s"]),
            _ms(r["one_pack_s"]),
            _ms(r["one_total_s"]),
            _ms(r["wide_total_s"]),
            _ms(r["gateway_total_s"]),
            "yes" if all(r[f"{e}_incremental"] for e in ("one", "wide", "gateway")) else "no",
            round(r["rss_mb"], 1),
            round(r["rss_baseline_mb"], 1),
        ]
        for r in results
    ]
    report.write(
        args.name,
        {
            "started": started,
            "load_average": {"start": load_start, "end": peers.load_average()},
            "results": results,
            "goal": {"translate_100k_s": 3.0, "rss_100k_mb": 1024},
        },
        [
            "VirtualServices",
            "cold: read (s)",
            "cold: translate (s)",
            "cold: cache for the next edit, made after publishing (s)",
            "cold: pack for xDS (s)",
            "one VS edited: read (ms)",
            "translate (ms)",
            "pack (ms)",
            "total (ms)",
            "one Upstream edited (a tenth of the VSs use it): total (ms)",
            "the HTTP Gateway edited: total (ms)",
            "every edit incremental",
            "control plane peak RSS (MB)",
            "same, empty folder (MB)",
        ],
        rows,
        notes=(__doc__ or "")
        + f"\nLoad average at start {load_start}, at end {peers.load_average()}.\n",
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


if __name__ == "__main__":
    main()
