"""A full disk under `gw discovery --dir`, the one gw process that writes into the served
folder (`discovered/<name>.yaml`). The folder is a 64 KiB tmpfs filled to the last byte:
the write fails with ENOSPC, the error names the file, no half-written or temporary file
is left for the store to read, the process keeps running, and the file is written once
space is free again (without any other change in the folder).

The control plane itself writes nothing into the folder; its own files (logs, `gw up`'s
state) are under GW_HOME, outside it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.manifests import service
from tests.support.processes import Process, gw_command, gw_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"needs root to mount a small tmpfs: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(path: Path) -> None:
    """Write until the file system is full."""
    with path.open("wb", buffering=0) as file:
        try:
            while True:
                file.write(b"\0" * 4096)
        except OSError:
            pass
        try:
            while True:
                file.write(b"\0")
        except OSError:
            return


def test_discovery_reports_a_full_disk_and_writes_when_space_is_back(
    small_disk: Path, tmp_path: Path
) -> None:
    (small_disk / "api.yaml").write_text(service("api", 80, 9))
    filler = small_disk / ".filler"
    fill(filler)
    process = Process(
        gw_command("discovery", "--dir", str(small_disk)),
        gw_env(tmp_path / "home"),
        tmp_path / "discovery.log",
    )
    try:
        wait_until(
            lambda: (
                "discovery: cannot write discovered/default-api-80.yaml: "
                "No space left on device" in process.output()
            ),
            what="the ENOSPC error",
        )
        written = small_disk / "discovered" / "default-api-80.yaml"
        assert not written.exists()
        assert sorted(p.name for p in (small_disk / "discovered").iterdir()) == []
        assert process.alive(), process.output()

        filler.unlink()  # hidden file: the store ignores it, nothing else changes
        wait_until(written.exists, what="the file once space is free")
        assert "serviceName: api" in written.read_text()
        assert process.alive(), process.output()
    finally:
        process.stop()
