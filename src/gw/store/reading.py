"""Reading manifest files into documents: one after the other, or, when a scan has many
megabytes to read, with the YAML parsed in worker processes.

Reading a folder is two jobs of about equal cost: parsing each file's YAML into plain data
(`manifests.load_documents`), and validating that data into resources
(`directory._parse`). At start-up over a large folder both run for seconds (9 s for
100,000 VirtualServices on one core), and only the first can leave the process: the
resources it makes share their field dictionaries and sets with each other
(`api.meta.Model.model_post_init`), which a copy from another process would not. So the
workers parse, and the store validates each file's documents as they arrive, in the order
the files were listed: the snapshot is the one a serial read gives.

Workers are spawned, not forked: the control plane runs threads (its servers, the folder
watcher), and a fork copies a process with other threads mid-flight. Spawning one costs
about 0.4 s (it imports the models), so workers start only for a scan of at least
`PARALLEL_BYTES`; and only where there is a second CPU to run them. Whatever goes wrong
with the workers (they cannot start, one dies), the files they did not read are read here,
one after the other, and the scan's result is the same.
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import traceback
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import yaml

from gw.store.manifests import Document, Limits, TooCostly, load_documents, read_text, size_refusal

log = logging.getLogger(__name__)

#: A scan that reads at least this many bytes parses them in worker processes (a folder of
#: 30,000 one-route VirtualServices; it takes about 2.5 s to read on one core).
PARALLEL_BYTES = 8 * 1024 * 1024
#: At most this many workers: the store validates what they parse at about the speed one or
#: two of them parse it, so more would wait.
MAX_WORKERS = 3
#: Files handed to a worker at a time (fewer round trips; still many batches per worker).
_BATCH = 4


@dataclass(frozen=True, slots=True)
class FileJob:
    """A file to read: its path, its size when it was looked at, and the digests of its
    documents as last read (documents whose text is unchanged are not constructed again)."""

    path: Path
    size: int
    digests: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Loaded:
    """A file's documents, or why it could not be read (`error`, for its status). `trace`:
    the traceback of a failure nobody foresaw (a bug in gw), for the control plane's log."""

    documents: list[Document]
    error: str | None = None
    trace: str | None = None


def load_file(job: FileJob, limits: Limits) -> Loaded:
    """One file's documents within `limits`; every failure is returned, none raised (a
    file must never stop the store, whatever it holds)."""
    try:
        refusal = size_refusal(job.size, limits)
        if refusal is not None:
            raise TooCostly(refusal)
        text = read_text(job.path, limits)
        return Loaded(load_documents(job.path, text, limits, job.digests))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, json.JSONDecodeError, TooCostly) as exc:
        return Loaded([], describe_load_error(exc))
    except Exception as exc:
        return Loaded([], unforeseen(exc), traceback.format_exc())


def load_files(
    jobs: Sequence[FileJob], limits: Limits, workers: int
) -> Generator[Loaded, None, None]:
    """Each job's `Loaded`, in the order of `jobs`; parsed by `workers` processes (none: in
    this one), and by this one while it waits for them."""
    done = 0
    if workers > 0:
        log.info(
            "reading %d files (%.1f MB) with %d worker process%s parsing beside this one",
            len(jobs),
            sum(job.size for job in jobs) / 1e6,
            workers,
            "" if workers == 1 else "es",
        )
        pool: ProcessPoolExecutor | None = None
        try:
            pool = worker_pool(workers)
            for loaded in _shared_loads(pool, jobs, limits):
                yield loaded
                done += 1
        except Exception as exc:  # the workers failed, not a file: read the rest here
            log.warning(
                "reading manifests in worker processes failed (%s: %s); reading the %d "
                "files left in the control plane's own process",
                type(exc).__name__,
                exc,
                len(jobs) - done,
            )
        finally:
            # Whatever ended the read (done, the workers failed, an interrupt), nothing is
            # left for them: what they have not begun is dropped, not waited for.
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
    for job in jobs[done:]:
        yield load_file(job, limits)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """Spawned workers that leave interrupts to the control plane: a Ctrl-C reaches the
    whole process group, and the control plane ends its read (and them) itself."""
    return ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=_ignore_interrupts
    )


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _shared_loads(pool: Executor, jobs: Sequence[FileJob], limits: Limits) -> Iterator[Loaded]:
    """The jobs' results in order, from the pool's workers, and from this process whenever
    the next result is not there yet: it takes the first batch after it that no worker has
    begun (while the workers start, and whenever they fall behind the validation of what
    they parsed). Taking from the front keeps what waits for its turn small."""
    batches = [jobs[i : i + _BATCH] for i in range(0, len(jobs), _BATCH)]
    futures: dict[int, Future[list[Loaded]]] = {
        at: pool.submit(load_batch, batch, limits) for at, batch in enumerate(batches)
    }
    taken: dict[int, list[Loaded]] = {}
    for at in range(len(batches)):
        if at in taken:
            yield from taken.pop(at)
            continue
        future = futures.pop(at)  # what is handed on is not kept here
        free = at + 1
        while not future.done() and free < len(batches):
            if free in futures and futures[free].cancel():
                del futures[free]
                taken[free] = load_batch(batches[free], limits)
            free += 1
        yield from future.result()


def load_batch(jobs: Sequence[FileJob], limits: Limits) -> list[Loaded]:
    """`load_file` for each of `jobs` (what a worker is handed at a time)."""
    return [load_file(job, limits) for job in jobs]


def reading_workers(jobs: Sequence[FileJob]) -> int:
    """How many worker processes should parse `jobs`: none for less than `PARALLEL_BYTES`
    or without a second CPU; else one per CPU but the store's own, up to `MAX_WORKERS`."""
    if sum(job.size for job in jobs) < PARALLEL_BYTES:
        return 0
    return max(0, min(usable_cpus() - 1, MAX_WORKERS))


#: Where a container's CPU quota is read: cgroup v2, then v1 (quota and period, in µs).
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
CGROUP_V1_CPU = Path("/sys/fs/cgroup/cpu")


def usable_cpus() -> int:
    """The CPUs this process may run on, fewer when its container has a CPU quota (an
    orchestrator's `limits.cpu: 1` leaves every CPU of the node in the affinity mask, and
    workers beyond the quota would only be throttled)."""
    affinity = getattr(os, "sched_getaffinity", None)  # Linux; elsewhere every CPU
    cpus = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    quota = _cgroup_quota()
    return cpus if quota is None else max(1, min(cpus, math.ceil(quota)))


def _cgroup_quota() -> float | None:
    """The CPU quota in CPUs (`1.5`), or None when there is none or it cannot be read."""
    try:
        if CGROUP_CPU_MAX.exists():
            quota, period = CGROUP_CPU_MAX.read_text().split()[:2]
        else:
            quota = (CGROUP_V1_CPU / "cpu.cfs_quota_us").read_text().strip()
            period = (CGROUP_V1_CPU / "cpu.cfs_period_us").read_text().strip()
        if quota in ("max", "-1"):
            return None
        return int(quota) / int(period)
    except (OSError, ValueError, ZeroDivisionError):
        return None


def describe_load_error(exc: Exception) -> str:
    """Why a file could not be read, as its status says it."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return "the file is not UTF-8 text"
    return str(exc)


def unforeseen(exc: BaseException) -> str:
    """Only the exception's type: its text might quote a Secret's value."""
    return (
        f"gw could not read this ({type(exc).__name__}); this is a bug in gw, and the "
        "control plane's log has the details"
    )
