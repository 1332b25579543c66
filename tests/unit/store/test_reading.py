"""Reading a folder with its YAML parsed in worker processes gives the snapshot a serial
read gives, errors and all, and falls back to a serial read when the workers fail."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.spawn
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from gw.snapshot import Snapshot
from gw.store import directory, reading
from gw.store.directory import DirectoryStore
from gw.store.manifests import Limits
from gw.store.reading import FileJob, load_file, load_files, reading_workers
from tests.support.manifests import virtual_service


def vs(i: object) -> str:
    """VirtualService `vs-<i>` as a YAML document of its own."""
    return "---" + virtual_service(f"vs-{i}", f"host-{i}.example.com", "backend", f"/{i}")


#: Files that cannot be read, or hold documents that cannot be: each must be reported the
#: same way whichever process parsed it.
BROKEN = {
    "bad-yaml.yaml": b"kind: [unclosed\n",
    "latin1.yaml": "metadata: {name: caf\u00e9}\n".encode("latin-1"),
    "bad.json": b"{not json",
    "unknown-field.yaml": vs("x").replace("domains", "domain").encode(),
    "alias.yaml": b"a: &x [1, 2]\nb: *x\n",
    "list.yaml": b"kind: List\nitems:\n"
    + b"".join(
        b"  - " + vs(f"l{i}").replace("---\n", "").replace("\n", "\n    ").encode() + b"\n"
        for i in range(2)
    ),
}


def write_folder(root: Path, files: int = 40, per_file: int = 5) -> None:
    for n in range(files):
        text = "".join(vs(n * per_file + i) for i in range(per_file))
        (root / f"vs-{n:03d}.yaml").write_text(text)
    for name, data in BROKEN.items():
        (root / name).write_bytes(data)


def parallel(monkeypatch: pytest.MonkeyPatch, workers: int = 1) -> None:
    """Every scan parses in `workers` spawned processes, however small."""
    monkeypatch.setattr(reading, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(reading, "MAX_WORKERS", workers)
    monkeypatch.setattr(reading, "usable_cpus", lambda: workers + 1)


def same(a: Snapshot, b: Snapshot, *, ordered: bool = True) -> None:
    """The same resources and errors (in the same order, for two reads of a whole folder:
    a later scan's updates may list them otherwise, as a serial read's do)."""
    assert a.resources == b.resources
    if ordered:
        assert list(a.resources) == list(b.resources)
        assert a.errors == b.errors
    else:
        assert sorted(map(repr, a.errors)) == sorted(map(repr, b.errors))


def test_a_parallel_read_gives_the_serial_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    write_folder(tmp_path)
    serial = DirectoryStore(tmp_path).scan()
    assert len(serial.resources) == 202
    assert {e.source.path for e in serial.errors if e.source} >= set(BROKEN) - {"list.yaml"}
    parallel(monkeypatch, workers=2)
    store = DirectoryStore(tmp_path, read_workers=True)
    with caplog.at_level(logging.INFO, logger="gw.store.reading"):
        same(store.scan(), serial)
    assert "reading 46 files (" in caplog.text
    assert "MB) with 2 worker processes parsing beside this one" in caplog.text
    # and the next scans, which read only what changed, build on what the workers read
    (tmp_path / "vs-007.yaml").write_text(vs("edited"))
    (tmp_path / "bad-yaml.yaml").write_text(vs("fixed"))
    after = store.scan()
    again = DirectoryStore(tmp_path)
    monkeypatch.setattr(reading, "PARALLEL_BYTES", 1 << 60)
    same(after, again.scan(), ordered=False)


def test_a_store_reads_in_one_process_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Workers are for gw's own programs (`read_workers=True`): a spawned worker imports
    the main module again, which another program's might not survive."""
    write_folder(tmp_path, files=3)
    parallel(monkeypatch)
    with caplog.at_level(logging.INFO, logger="gw.store.reading"):
        assert len(DirectoryStore(tmp_path).scan().resources) == 17
    assert "worker process" not in caplog.text


def test_what_a_worker_parses_reaches_the_store_intact(tmp_path: Path) -> None:
    """In the scans above the store may parse every file itself while the workers start;
    here a spawned worker parses them all (broken ones too), and its results are the ones
    parsing here gives."""
    write_folder(tmp_path, files=5)
    jobs = [FileJob(p, p.stat().st_size) for p in sorted(tmp_path.iterdir())]
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        theirs = pool.submit(reading.load_batch, jobs, Limits()).result()
    assert theirs == reading.load_batch(jobs, Limits())
    assert {loaded.error for loaded in theirs} > {None}


def test_workers_leave_interrupts_to_the_control_plane() -> None:
    """A Ctrl-C reaches the whole process group: the workers do not die of it (each with a
    traceback on the terminal) in the middle of the control plane's read."""
    with reading.worker_pool(1) as pool:
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN


def test_a_read_given_up_drops_the_work_no_worker_has_begun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store stops consuming (an interrupt while it validates): closing the read
    cancels every batch still queued instead of waiting for the workers to parse them all.
    The pool here is one thread whose batches after the first wait until the read is
    closed; the caller may take one batch while the first is parsed."""
    paths = []
    for n in range(10 * reading._BATCH):
        paths.append(tmp_path / f"{n:02d}.yaml")
        paths[-1].write_text(vs(n))
    jobs = [FileJob(p, p.stat().st_size) for p in paths]
    first_done, closed = threading.Event(), threading.Event()
    by_worker: list[int] = []

    def gated_batch(batch: list[FileJob], limits: Limits) -> list[reading.Loaded]:
        if threading.current_thread() is threading.main_thread():
            assert first_done.wait(timeout=10)  # the caller takes at most one batch
        else:
            by_worker.append(jobs.index(batch[0]) // reading._BATCH)
            if batch[0] is jobs[0]:
                first_done.set()
            else:
                assert closed.wait(timeout=10)
        return [load_file(job, limits) for job in batch]

    monkeypatch.setattr(reading, "load_batch", gated_batch)
    pools: list[ThreadPoolExecutor] = []

    def thread_pool(workers: int) -> ThreadPoolExecutor:
        pools.append(ThreadPoolExecutor(workers))
        return pools[-1]

    monkeypatch.setattr(reading, "worker_pool", thread_pool)
    read = load_files(jobs, Limits(), workers=1)
    assert next(read) == load_file(jobs[0], Limits())
    read.close()  # returns at once: nothing waits for the queued batches
    closed.set()
    pools[0].shutdown(wait=True)  # the batch in flight ends; no other one starts
    assert by_worker[0] == 0 and len(by_worker) <= 2  # the first, and one in flight at most


def test_the_store_closes_a_read_it_gives_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever stops the store mid-read (here, a stand-in for an interrupt while it
    validates), the read is closed then and there, so that its workers stop."""

    class Interrupted(BaseException):
        pass

    def interrupted(*args: object) -> object:
        raise Interrupted

    closed: list[bool] = []
    real = directory.load_files

    def watched(*args: Any) -> Iterator[reading.Loaded]:
        try:
            yield from real(*args)
        finally:
            closed.append(True)

    write_folder(tmp_path, files=3)
    monkeypatch.setattr(directory, "load_files", watched)
    monkeypatch.setattr(directory, "_parse", interrupted)
    with pytest.raises(Interrupted) as raised:
        DirectoryStore(tmp_path).scan()
    assert closed == [True]  # while the traceback (and its frames) are still held
    assert raised.traceback


def test_workers_that_cannot_start_leave_the_read_to_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The worker processes are started from a program that does not exist: the files are
    read in the store's own process, with the same result, and the log says why."""
    write_folder(tmp_path, files=5)
    serial = DirectoryStore(tmp_path).scan()
    parallel(monkeypatch)
    monkeypatch.setattr(multiprocessing.spawn, "_python_exe", str(tmp_path / "no-python"))
    with caplog.at_level(logging.WARNING, logger="gw.store.reading"):
        snapshot = DirectoryStore(tmp_path, read_workers=True).scan()
    same(snapshot, serial)
    assert "reading manifests in worker processes failed (" in caplog.text
    assert "files left in the control plane's own process" in caplog.text


def test_results_keep_the_order_of_the_files_whoever_parses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one slow worker (a thread that waits until the caller has taken the last
    batch), the caller parses every batch but the first, ahead of the one it waits for; the
    results still come in the files' order."""
    paths = []
    for n in range(30):
        paths.append(tmp_path / f"{n:02d}.yaml")
        paths[-1].write_text(vs(n))
    jobs = [FileJob(p, p.stat().st_size) for p in paths]
    expected = [load_file(job, Limits()) for job in jobs]
    slow: list[int] = []
    release = threading.Event()

    def slow_batch(batch: list[FileJob], limits: Limits) -> list[reading.Loaded]:
        if threading.current_thread() is not threading.main_thread():  # the worker
            slow.append(len(batch))
            assert release.wait(timeout=10)
        elif batch[-1] is jobs[-1]:  # the caller took the last batch: let the worker end
            release.set()
        return [load_file(job, limits) for job in batch]

    with ThreadPoolExecutor(1) as pool:
        monkeypatch.setattr(reading, "load_batch", slow_batch)
        got = list(reading._shared_loads(pool, jobs, Limits()))
    assert got == expected
    assert slow == [reading._BATCH]  # the worker's one batch; the caller parsed the rest


def test_unforeseen_failures_of_a_file_are_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Stands in for a parser bug: whatever reading a file raises becomes its error (the
    exception's type only), and the traceback goes to the log."""

    def broken(*args: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    (tmp_path / "a.yaml").write_text(vs(1))
    monkeypatch.setattr(reading, "load_documents", broken)
    snapshot = DirectoryStore(tmp_path).scan()
    (error,) = snapshot.errors
    assert error.message == (
        "gw could not read this (RecursionError); this is a bug in gw, and the control "
        "plane's log has the details"
    )
    assert "reading a.yaml failed unexpectedly" in caplog.text
    assert "Traceback" in caplog.text


def test_workers_only_for_large_reads_and_a_second_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    big = [FileJob(Path("a.yaml"), reading.PARALLEL_BYTES)]
    small = [FileJob(Path("a.yaml"), reading.PARALLEL_BYTES - 1)]
    monkeypatch.setattr(reading, "usable_cpus", lambda: 2)
    assert (reading_workers(small), reading_workers(big)) == (0, 1)
    monkeypatch.setattr(reading, "usable_cpus", lambda: 1)
    assert reading_workers(big) == 0
    monkeypatch.setattr(reading, "usable_cpus", lambda: 16)
    assert reading_workers(big) == reading.MAX_WORKERS


@pytest.mark.parametrize(
    ("v2", "v1", "cpus"),
    [
        (None, ("-1", "100000"), 8),  # v1, no quota
        ("max 100000\n", None, 8),  # v2, no quota
        ("100000 100000\n", None, 1),  # `limits.cpu: 1`
        ("150000 100000\n", None, 2),  # 1.5 CPUs: a second one part of the time
        (None, ("200000", "100000"), 2),  # v1, 2 CPUs
        ("3200000 100000\n", None, 8),  # more quota than CPUs
        ("garbage\n", None, 8),  # unreadable: the affinity mask
        (None, None, 8),  # no cgroup files at all
    ],
)
def test_usable_cpus_follow_a_container_quota(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    v2: str | None,
    v1: tuple[str, str] | None,
    cpus: int,
) -> None:
    monkeypatch.setattr(reading.os, "sched_getaffinity", lambda pid: set(range(8)))
    monkeypatch.setattr(reading, "CGROUP_CPU_MAX", tmp_path / "cpu.max")
    monkeypatch.setattr(reading, "CGROUP_V1_CPU", tmp_path / "cpu")
    if v2 is not None:
        (tmp_path / "cpu.max").write_text(v2)
    if v1 is not None:
        (tmp_path / "cpu").mkdir()
        (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text(v1[0] + "\n")
        (tmp_path / "cpu" / "cpu.cfs_period_us").write_text(v1[1] + "\n")
    assert reading.usable_cpus() == cpus


def test_usable_cpus_without_an_affinity_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the system has no affinity call (not Linux), every CPU counts."""
    monkeypatch.delattr(reading.os, "sched_getaffinity")
    monkeypatch.setattr(reading.os, "cpu_count", lambda: 6)
    monkeypatch.setattr(reading, "_cgroup_quota", lambda: None)
    assert reading.usable_cpus() == 6


def test_load_files_without_workers_reads_in_order(tmp_path: Path) -> None:
    paths = [tmp_path / f"{n}.yaml" for n in range(3)]
    for n, path in enumerate(paths):
        path.write_text(vs(n))
    jobs = [FileJob(p, p.stat().st_size) for p in paths]
    got = list(load_files(jobs, Limits(), workers=0))
    assert [loaded.documents[0].data["metadata"]["name"] for loaded in got] == [
        "vs-0",
        "vs-1",
        "vs-2",
    ]
