"""`python -m bench` (`make bench`): every benchmark, one after the other, then a summary.

Each part runs as `python -m bench.<part>` in a process of its own and writes
`bench/results/<part>.json` and `.md`; this writes `bench/results/summary.json` and `.md`:
the machine, the load average at start and end, each part's wall time and outcome, and the
headline ratios of each part. A part that fails is reported and the others still run; the
exit status is then 1.

    python -m bench                       # everything, ~15 minutes on 2 cores
    python -m bench --only dataplane,oidc # some parts
    python -m bench --quick               # seconds per part, results to a temp folder
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import peers

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = Path(__file__).parent / "results"

#: Each part and its arguments: full run, quick run.
PARTS: dict[str, tuple[list[str], list[str]]] = {
    "dataplane": (["--duration", "5", "--rounds", "8"], ["--duration", "1", "--rounds", "1"]),
    "dataplane_pieces": (
        ["--duration", "2", "--rounds", "5"],
        ["--duration", "1", "--rounds", "1", "--only", "no host check"],
    ),
    "jwt": (["--duration", "2", "--reps", "9"], ["--duration", "1", "--reps", "1"]),
    "transform": (["--duration", "2", "--reps", "15"], ["--duration", "1", "--reps", "1"]),
    "oidc": (
        ["--duration", "5", "--rounds", "5"],
        ["--duration", "1", "--rounds", "1", "--sessions", "20"],
    ),
    "credentials": (
        ["--duration", "5", "--rounds", "5"],
        ["--duration", "1", "--rounds", "1", "--users", "5"],
    ),
    "extauth": (["--duration", "4", "--reps", "3"], ["--duration", "1", "--reps", "1"]),
    "authz_transport": (
        ["--duration", "5", "--rounds", "3"],
        ["--duration", "1", "--rounds", "1"],
    ),
    "translate": ([], ["--sizes", "100,1000"]),
    "propagation": ([], ["--samples", "3", "--sizes", "10,1000"]),
    "routestats": (["--duration", "5", "--rounds", "8"], ["--duration", "1", "--rounds", "1"]),
    "isolation": (
        ["--upstreams", "20000", "--rounds", "3"],
        ["--upstreams", "2000", "--rounds", "1"],
    ),
    "stopping": ([], ["--count", "2000", "--at", "1,2"]),
    "hostcost": ([], ["--copies", "3"]),
    "transform_memory": ([], ["--sizes", "50"]),
}


def headline(part: str, data: dict[str, Any]) -> dict[str, Any]:
    """The numbers the report leads with, from a part's JSON."""
    if part in ("dataplane", "jwt", "oidc", "transform", "credentials"):
        return {
            "ratios": data["ratios"],
            "median": {k: v["median"] for k, v in data["scenarios"].items()},
        }
    if part == "extauth":
        return {k: {"rps": v["rps_median"], "vs_plain": v["rps_vs_plain"]}
                for k, v in data["summary"].items()}  # fmt: skip
    if part == "authz_transport":
        return dict(data["summary"])
    if part == "translate":
        return {
            str(r["virtual_services"]): {
                "translate_s": round(r["translate_s"], 3),
                "rss_mb": round(r["rss_mb"], 1),
            }
            for r in data["results"]
        }
    if part == "dataplane_pieces":
        return {name: v["vs_gw"] for name, v in data["variants"].items()}
    if part == "routestats":
        return {"ratios": data["ratios"], "bytes_per_route": data["memory"]["bytes_per_route"]}
    if part == "isolation":
        return {layout: {"busy_p99_ms": s["busy_p99_ms"], "busy_max_ms": s["busy_max_ms"]}
                for layout, s in data["summary"].items()}  # fmt: skip
    if part == "transform_memory":
        return {str(r["routes"]): {"kib_per_lua_route": round(r["kib_per_lua_route"], 1)}
                for r in data["results"]}  # fmt: skip
    if part == "hostcost":
        return {k: round(data[k]) for k in ("median_us", "p90_us", "max_us")}
    if part == "stopping":
        return {"exit_s": {f"{s['at_s']:g}": s["exit_s"] for s in data["stops"]},
                "once_served_exit_s": data["baseline_exit_s"]}  # fmt: skip
    return {str(r["virtual_services"]): {"idle": r["idle"], "load": r["load"]}
            for r in data["results"]}  # fmt: skip


def run_part(part: str, args: list[str], out: Path) -> dict[str, Any]:
    started = time.monotonic()
    env = {**os.environ, "GW_BENCH_RESULTS": str(out)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", f"bench.{part}", *args]
    print(f"== {' '.join(command[1:])}", flush=True)
    done = subprocess.run(command, cwd=ROOT, env=env)
    outcome: dict[str, Any] = {
        "command": f"python -m bench.{part} {' '.join(args)}".strip(),
        "seconds": round(time.monotonic() - started, 1),
        "ok": done.returncode == 0,
    }
    result = out / f"{part}.json"
    if outcome["ok"] and result.exists():
        outcome["headline"] = headline(part, json.loads(result.read_text()))
    return outcome


def markdown(summary: dict[str, Any]) -> str:
    m = summary["machine"]
    v = m["versions"]
    lines = [
        "# Benchmark run",
        "",
        f"`python -m bench{summary['flags']}`, started {summary['started']}, "
        f"{summary['seconds']:.0f} s in all. Load average at start "
        f"{summary['load_average']['start']}, at end {summary['load_average']['end']}.",
        "",
        f"Machine: {m['cpus']} × {m['cpu_model']}, {m['memory_gb']} GB, {m['os']}, "
        f"kernel {m['kernel']}, Python {m['python']} ({m['python_executable']}). "
        f"Envoy {v['envoy']}, nginx {v['nginx']}, HAProxy {v['haproxy']}, "
        f"Apache {v['apache']}, mod_auth_openidc {v['mod_auth_openidc']}, "
        f"Redis {v['redis']}, wrk {v['wrk']}.",
        "",
        "| part | command | seconds | outcome | results |",
        "|---|---|---|---|---|",
    ]
    for part, o in summary["parts"].items():
        state = "ok" if o["ok"] else "**failed**"
        lines.append(f"| {part} | `{o['command']}` | {o['seconds']:.0f} | {state} | {part}.md |")
    for part in ("dataplane", "jwt", "oidc"):
        ratios = summary["parts"].get(part, {}).get("headline", {}).get("ratios")
        if not ratios:
            continue
        lines += ["", f"{part} ratios:", "", "| ratio | req/s | p50 | p99 | CPU/req |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for name, r in ratios.items():
            lines.append(
                f"| {name} | {r['rps']:.3f} | {r['p50_ms']:.3f} | {r['p99_ms']:.3f} | "
                f"{r['cpu_us_per_req']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated parts")
    parser.add_argument("--quick", action="store_true", help="seconds per part, for trying")
    parser.add_argument("--out", type=Path, help="results folder (default bench/results)")
    args = parser.parse_args(argv)
    parts = [p for p in args.only.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}; known: {', '.join(PARTS)}")
    out = args.out or (
        Path(tempfile.mkdtemp(prefix="gw-bench-quick-")) if args.quick else DEFAULT_RESULTS
    )
    out.mkdir(parents=True, exist_ok=True)
    started, load_start, clock = peers.now(), peers.load_average(), time.monotonic()
    outcomes = {p: run_part(p, PARTS[p][1 if args.quick else 0], out) for p in parts}
    flags = (" --quick" if args.quick else "") + (
        f" --only {args.only}" if parts != list(PARTS) else ""
    )
    summary = {
        "started": started,
        "flags": flags,
        "seconds": round(time.monotonic() - clock, 1),
        "load_average": {"start": load_start, "end": peers.load_average()},
        "machine": peers.machine(),
        "parts": outcomes,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "summary.md").write_text(markdown(summary))
    print(markdown(summary))
    print(f"results in {out}")
    return 0 if all(o["ok"] for o in outcomes.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
