"""Translation time and control-plane memory for 100, 1,000 and 10,000 VirtualServices.

Each size runs in a fresh process: read the folder (parse + validate), translate
(stage 1 + stage 2), pack for xDS (serialize + hash, what the cache does), and report the
peak RSS of that process. The baseline, measured in the same process, is the bare Python
interpreter with gw imported (`rss_baseline_mb`), so `rss_mb - rss_baseline_mb` is what the
configuration costs. Goal (issue 2): 10,000 in under 1 s, RSS under 300 MB.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import report

SIZES = (100, 1_000, 10_000)
REPEAT = 3

CHILD = r"""
import gc, json, resource, sys, time
from pathlib import Path
import gw.translator, gw.store.directory, gw.xds.cache
from gw.translator import translate
from gw.store.directory import DirectoryStore
from gw.xds.cache import pack_resources
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
folder = Path(sys.argv[1]); repeat = int(sys.argv[2])
runs = []
for _ in range(repeat):
    gc.collect()
    t0 = time.perf_counter(); snapshot = DirectoryStore(folder).scan()
    t1 = time.perf_counter(); result = translate(snapshot)
    t2 = time.perf_counter(); pack_resources(result.xds.resources)
    t3 = time.perf_counter()
    runs.append({"read": t1 - t0, "translate": t2 - t1, "pack": t3 - t2})
    # the incremental case: one more translation of an already-read snapshot
    t4 = time.perf_counter(); translate(snapshot, previous=result.accepted)
    runs[-1]["retranslate"] = time.perf_counter() - t4
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"runs": runs, "rss_mb": rss, "rss_baseline_mb": base}))
"""


def measure(count: int) -> dict[str, float]:
    from bench.fixtures import write_config

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "config"
        write_config(folder, count)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(folder), str(REPEAT)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    data = json.loads(out)
    runs = data["runs"]
    return {
        "virtual_services": count,
        "read_s": report.median([r["read"] for r in runs]),
        "translate_s": report.median([r["translate"] for r in runs]),
        "pack_s": report.median([r["pack"] for r in runs]),
        "retranslate_s": report.median([r["retranslate"] for r in runs]),
        "total_s": report.median([r["read"] + r["translate"] + r["pack"] for r in runs]),
        "rss_mb": data["rss_mb"],
        "rss_baseline_mb": data["rss_baseline_mb"],
    }


def main() -> None:
    results = [measure(n) for n in SIZES]
    rows = [
        [
            r["virtual_services"],
            r["read_s"],
            r["translate_s"],
            r["pack_s"],
            r["total_s"],
            r["retranslate_s"],
            r["rss_mb"],
            r["rss_baseline_mb"],
        ]
        for r in results
    ]
    report.write(
        "translate",
        {"results": results, "goal": {"translate_10k_s": 1.0, "rss_10k_mb": 300}},
        [
            "VirtualServices",
            "read (s)",
            "translate (s)",
            "pack for xDS (s)",
            "total (s)",
            "re-translate (s)",
            "peak RSS (MB)",
            "RSS of bare process (MB)",
        ],
        rows,
        notes=__doc__ or "",
    )


if __name__ == "__main__":
    main()
