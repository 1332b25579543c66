"""Writing benchmark results: JSON for machines, a Markdown table for people."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Where results go: `bench/results/`, or `GW_BENCH_RESULTS` (`python -m bench --out`, so
#: that quick trial runs do not overwrite the committed results).
RESULTS = Path(os.environ.get("GW_BENCH_RESULTS") or Path(__file__).parent / "results")


def machine() -> dict[str, Any]:
    """The machine (CPU model, kernel, versions of the peers) and the load average now."""
    from bench import peers

    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
        **peers.machine(),
        "load_average_at_write": peers.load_average(),
    }


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def write(
    name: str,
    data: dict[str, Any],
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    notes: str = "",
) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {"machine": machine(), **data}
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [
        f"# {name}",
        "",
        notes.strip(),
        "",
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    m = data["machine"]
    lines += [
        "",
        f"Machine: {m['cpus']} CPUs ({m['cpu_model']}), Python {m['python']} "
        f"({m.get('python_executable', 'interpreter not recorded')}), "
        f"{m['platform']}, {m['date']}; load average when written "
        f"{m['load_average_at_write']}.",
    ]
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.1f}" if value >= 10 else f"{value:.3f}"
    return str(value)


def ratio_table(ratios: dict[str, dict[str, float]]) -> list[str]:
    """The Markdown rows of the paired ratios (req/s, p50, p99, CPU per request)."""
    lines = ["| ratio | req/s | p50 | p99 | CPU/req |", "|---|---|---|---|---|"]
    for name, r in ratios.items():
        lines.append(
            f"| {name} | {r['rps']:.3f} | {r['p50_ms']:.3f} | {r['p99_ms']:.3f} | "
            f"{r['cpu_us_per_req']:.3f} |"
        )
    return lines


def write_part(out: Path, part: str, result: dict[str, Any], markdown: str) -> None:
    """`<part>.json` (for machines) and `<part>.md` (for people) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{part}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"{part}.md").write_text(markdown)
