"""`gw up` reading a folder large enough for worker processes (`store/reading.py`): the
real program spawns them (its main module imported again in each), serves what they
parsed through Envoy, and leaves none running once the folder is read. (On a machine with
one usable CPU it reads alone, and the test checks that instead.)

The folder's size comes from YAML comments, which cost bytes but little parsing, so that
the scan passes `PARALLEL_BYTES` in about a second.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from gw.store import reading
from tests.support.manifests import upstream, virtual_service
from tests.support.processes import Echo
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

FILES = 120
#: Bytes of comments per file: the folder is a little over the threshold.
PADDING = reading.PARALLEL_BYTES // FILES + 1024


def large_folder(tmp_path: Path, echo: Echo) -> Path:
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "upstream.yaml").write_text(upstream("app", echo.port))
    comment = ("# " + "padding " * 12 + "\n") * (PADDING // 100)
    for n in range(FILES):
        (folder / f"vs-{n:03d}.yaml").write_text(
            comment + virtual_service(f"vs-{n}", f"vs-{n}.test", "app")
        )
    return folder


def spawned_workers(pid: int) -> list[str]:
    """The command lines of `pid`'s descendants that are multiprocessing workers."""
    rows = subprocess.run(
        ["ps", "-eo", "ppid=,pid=,args="], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    table = [row.split(None, 2) for row in rows]
    family, found = {pid}, []
    for _ in range(4):  # gw up -> control plane (-> workers), a few levels at most
        for ppid, child, *args in table:
            if int(ppid) in family and int(child) not in family:
                family.add(int(child))
                if args and "spawn_main" in args[0]:
                    found.append(args[0])
    return found


def test_gw_up_reads_a_large_folder_with_workers_and_serves_it(
    tmp_path: Path, echo_factory: Any, gw_up_factory: Any
) -> None:
    workers = max(0, min(reading.usable_cpus() - 1, reading.MAX_WORKERS))
    folder = large_folder(tmp_path, echo_factory("app"))
    assert sum(f.stat().st_size for f in folder.iterdir()) >= reading.PARALLEL_BYTES
    gw = gw_up_factory(folder)
    log = gw.process.output() + (gw.state_dir / "logs" / "gw.log").read_text()
    if workers:
        plural = "" if workers == 1 else "es"
        assert f"with {workers} worker process{plural} parsing beside this one" in log
    else:  # one usable CPU (a quota of one): the store reads alone, as documented
        assert "worker process" not in log
    assert "reading manifests in worker processes failed" not in log
    statuses = gw.statuses()
    for n in range(FILES):
        assert statuses[f"VirtualService default.vs-{n}"]["state"] == "Accepted"
    for n in (0, FILES // 2, FILES - 1):
        response = gw.get("/", host=f"vs-{n}.test")
        assert response.status_code == 200
        assert response.headers["x-echo-name"] == "app"
    wait_until(
        lambda: not spawned_workers(gw.process.popen.pid),
        timeout=10,
        what="the read's worker processes to end",
    )
