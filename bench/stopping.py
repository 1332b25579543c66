"""Stopping: how long `gw up` takes to exit after a Ctrl-C at moments of its start.

A folder holds N VirtualServices (the mixed fixture of `fixtures.py`). For each moment,
a new `gw up` is started on it and its process group is sent SIGINT that many seconds
later, as a terminal's Ctrl-C would be; the time from the signal to the command's exit is
measured. Over 100,000 VirtualServices, the first seconds are the read (with worker
processes), the next ten the first translation, and then Envoy's start. The baseline is
the same `gw up` stopped once the last VirtualService answers through Envoy (nothing is
being read or translated then), measured in the same run.

Nothing is sent through the proxy: only the exit is timed. A command that does not exit
within `LIMIT` seconds is killed and reported as such.

Run from the repository root: `python -m bench.stopping [--count 100000] [--at 3,6,9,12]`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.ports import free_ports

from bench import peers, report
from bench.fixtures import write_config

COUNT = 100_000
#: Seconds after the start at which the signal is sent.
MOMENTS = (2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 15.0)
#: Seconds a stopping `gw up` is given before it is killed.
LIMIT = 60.0
#: Seconds to wait for the last VirtualService to answer, per VirtualService.
START_PER_VS = 0.01


def _start(folder: Path, home: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`gw up` on `folder` in a process group of its own; its HTTP port."""
    http, https, xds, admin, debug = free_ports(5)
    command = [
        sys.executable, "-m", "gw", "up", str(folder), "--bind", "127.0.0.1",
        "--http-port", str(http), "--https-port", str(https), "--xds-port", str(xds),
        "--proxy-admin-port", str(admin), "--debug-port", str(debug),
        "--log-level", "warning", "--envoy-log-level", "error",
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        env={**os.environ, "GW_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return process, http


def _stop(process: subprocess.Popen[bytes]) -> float | None:
    """Seconds from SIGINT to the exit of `process`; None when it had to be killed."""
    signalled = time.perf_counter()
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return None
    return time.perf_counter() - signalled


def _served(port: int, count: int) -> float:
    """Wait until the last VirtualService of the fixture answers through Envoy."""
    deadline = time.perf_counter() + 120 + START_PER_VS * count
    host = {"host": f"host-{count - 1}.bench.example.com"}
    with httpx.Client(timeout=2) as client:
        while time.perf_counter() < deadline:
            try:
                if client.get(f"http://127.0.0.1:{port}/r", headers=host).status_code != 404:
                    return time.perf_counter()
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    raise TimeoutError(f"host-{count - 1} was not served in time")


def measure(count: int, moments: list[float]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "config"
        write_config(folder, count, mixed=True)
        stops: list[dict[str, Any]] = []
        for at in moments:
            process, _ = _start(folder, work / "home")
            time.sleep(at)  # the moment of the Ctrl-C is what is measured
            stops.append({"at_s": at, "exit_s": _stop(process)})
        started = time.perf_counter()
        process, port = _start(folder, work / "home")
        served_s = _served(port, count) - started
        baseline = _stop(process)
    return {"virtual_services": count, "served_s": served_s, "baseline_exit_s": baseline,
            "stops": stops}  # fmt: skip


def _cell(seconds: float | None) -> str:
    return "killed" if seconds is None else f"{seconds:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--count", type=int, default=COUNT, help="VirtualServices")
    parser.add_argument("--at", default=",".join(map(str, MOMENTS)), help="seconds, comma list")
    args = parser.parse_args(argv)
    started, load_start = peers.now(), peers.load_average()
    result = measure(args.count, [float(at) for at in args.at.split(",")])
    baseline = result["baseline_exit_s"]
    rows = [
        [
            f"{stop['at_s']:g}",
            _cell(stop["exit_s"]),
            "" if stop["exit_s"] is None or not baseline else f"{stop['exit_s'] / baseline:.1f}",
        ]
        for stop in result["stops"]
    ]
    rows.append([f"served ({result['served_s']:.1f} s)", _cell(baseline), "1"])
    report.write(
        "stopping",
        {
            "started": started,
            "load_average": {"start": load_start, "end": peers.load_average()},
            **result,
        },
        ["Ctrl-C after (s)", "exit after (s)", "/ stopped once served"],
        rows,
        f"`gw up` over {args.count:,} VirtualServices (mixed fixture), stopped at moments of "
        "its start; the last row stops it once the last VirtualService answers.",
    )


if __name__ == "__main__":
    main()
