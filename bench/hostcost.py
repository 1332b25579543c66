"""What one more virtual host costs to translate, for every kind of host the goldens hold.

The scale benchmarks (`translate.py`) use one-route VirtualServices; a configuration whose
hosts use JWT, TLS, transformations or rate limits pays what those options cost per host.
For each golden input (`tests/golden/cases`) that has VirtualServices, this translates the
input alone, then with each of its VirtualServices copied `--copies` times (new names, and
domains of their own so that nothing conflicts), and reports the difference per copy: the
translation's cost of one more such host. Each translation is timed three times in one
process, the fastest kept. A copy of a host that is rejected costs what its rejection does.

It found that each TLS VirtualService loaded its secret's private key again (30 ms for an
RSA key) and that shared templates were parsed again for every route.

Run from the repository root: `python -m bench.hostcost [--copies 30] [--top 40]`.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from tests.golden.test_golden import ALL_CASES, case_id, options_for

from bench import report
from bench.fixtures import write_config
from gw.discovery import ServiceDiscovery
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.translator.translation import translate


def _domain(domain: object, copy_number: int) -> object:
    """A domain of the copy's own (`*` becomes a host name: two `*` would conflict)."""
    if not isinstance(domain, str):
        return domain
    if domain == "*":
        return f"c{copy_number}.any.test"
    if domain.startswith("*."):
        return f"*.c{copy_number}-{domain[2:]}"
    if domain.startswith("*"):
        return f"*c{copy_number}-{domain[1:]}"
    return f"c{copy_number}-{domain}"


def copy_of(vs: dict[str, Any], copy_number: int) -> dict[str, Any]:
    """VirtualService document `vs`, renamed, with domains and SNI names of its own."""
    out = copy.deepcopy(vs)
    out["metadata"]["name"] = f"{out['metadata']['name']}-c{copy_number}"
    spec = out.get("spec") if isinstance(out.get("spec"), dict) else {}
    for block, key in ((spec.get("virtualHost"), "domains"), (spec.get("sslConfig"), "sniDomains")):
        if isinstance(block, dict) and isinstance(block.get(key), list):
            block[key] = [_domain(d, copy_number) for d in block[key]]
    return out


def _fastest(folder: Path, options: Options) -> float:
    snapshot = ServiceDiscovery(Options().namespace)(DirectoryStore(folder).scan())
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        translate(snapshot, options)
        best = min(best, time.perf_counter() - start)
    return best


def per_host(case: Path, copies: int, work: Path) -> tuple[float, int] | None:
    """Microseconds one more copy of the case's VirtualServices costs, and how many there
    are (None: the case has none, or does not parse as YAML)."""
    try:
        documents = [d for d in yaml.safe_load_all(case.read_text()) if isinstance(d, dict)]
    except yaml.YAMLError:
        return None
    hosts = [
        d
        for d in documents
        if d.get("kind") == "VirtualService" and isinstance(d.get("metadata"), dict)
    ]
    if not hosts:
        return None
    alone, copied = work / "alone", work / "copied"
    for folder in (alone, copied):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        shutil.copy(case, folder / case.name)
    extra = [copy_of(vs, n) for n in range(copies) for vs in hosts]
    (copied / "copies.yaml").write_text(yaml.safe_dump_all(extra))
    options = options_for(case)
    cost = (_fastest(copied, options) - _fastest(alone, options)) / len(extra)
    return cost * 1e6, len(hosts)


def fixture_per_host(work: Path, hosts: int = 1_000) -> float:
    """Microseconds one more one-route VirtualService of the scale fixture
    (`fixtures.VS`, to one Upstream) costs: `hosts` more of them against 100."""
    few, many = work / "fixture-few", work / "fixture-many"
    for folder, count in ((few, 100), (many, 100 + hosts)):
        shutil.rmtree(folder, ignore_errors=True)
        write_config(folder, count)
    options = Options(now=time.time())
    return (_fastest(many, options) - _fastest(few, options)) / hosts * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--top", type=int, default=40, help="rows in the Markdown table")
    args = parser.parse_args()
    rows: list[tuple[str, int, float]] = []
    with tempfile.TemporaryDirectory(prefix="gw-hostcost-") as tmp:
        for case in ALL_CASES:
            found = per_host(case, args.copies, Path(tmp))
            if found is not None:
                rows.append((case_id(case), found[1], found[0]))
        fixture_us = fixture_per_host(Path(tmp))
    rows.sort(key=lambda row: -row[2])
    costs = [row[2] for row in rows]
    summary = {
        "median_us": statistics.median(costs),
        "p90_us": report.percentile(costs, 90),
        "max_us": costs[0],
        "scale_fixture_us": fixture_us,
    }
    report.write(
        "hostcost",
        {"copies": args.copies, "cases": [list(r) for r in rows], **summary},
        ["golden case", "VirtualServices", "µs per copy of them"],
        [(name, count, f"{cost:.0f}") for name, count, cost in rows[: args.top]],
        notes=f"""
What one more copy of each golden case's VirtualServices costs to translate
(`python -m bench.hostcost --copies {args.copies}`): {len(rows)} cases; median
{summary["median_us"]:.0f} µs, 90th percentile {summary["p90_us"]:.0f} µs, the costliest
{summary["max_us"]:.0f} µs. The {min(args.top, len(rows))} costliest below; every case in
the JSON. A one-route VirtualService of the scale fixture (`fixtures.VS`, measured the
same way with 1,000 more of them) costs {fixture_us:.0f} µs.
""",
    )


if __name__ == "__main__":
    main()
