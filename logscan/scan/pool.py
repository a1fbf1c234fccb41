"""Scanning a job's files: big files surveyed in worker processes, the rest in this one.

A ScanPool holds the scanner and, once a big file needs it, the worker processes; a sweep of
many jobs passes one pool to every job so the workers start once.
"""

from __future__ import annotations

import os

from logscan.catalogue import Catalogue, load_catalogue
from logscan.scan import progress
from logscan.scan.events import FileScan
from logscan.files.reader import NUMPY_AFTER, line_ranges, preload_numpy
from logscan.scan.scanner import Scanner, Survey
from logscan.settings import Settings

# A file this big is surveyed in worker processes: starting one costs ~20 ms, and meanwhile this
# process loads the job model and rules, so even a single big log gains.
PARALLEL_MIN_BYTES = 8 << 20


def usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's core count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def forked_pool(workers: int, initializer=None, initargs=()):
    """A pool of processes forked from this one, so each inherits what this process has loaded
    (the scanner, the catalogue, imported modules) instead of loading it again, and each ends
    when this process does; None where processes cannot be forked."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start_forked, initargs=(os.getpid(), initializer, initargs))


def _start_forked(parent: int, initializer, initargs) -> None:
    _die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


class ScanPool:
    """The scanner of a run and its worker processes, started on first use."""

    def __init__(self, catalogue: Catalogue, settings: Settings):
        self.scanner = Scanner(catalogue, settings.progress_patterns)
        self.settings = settings
        # More processes than cores this process may use only compete for them.
        self.workers = min(settings.processes, usable_cores()) if settings.processes else usable_cores()
        self._executor = None

    def submit(self, path: str, start: int, end: int | None):
        if self._executor is None:
            self._executor = self._start()
        return self._executor.submit(_survey_in_worker, path, start, end)

    def _start(self):
        forked = forked_pool(self.workers, _adopt_scanner, (self.scanner,))
        if forked is not None:
            return forked
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(self.workers, initializer=_init_worker,
                                   initargs=(os.getpid(), self.settings.rule_dirs, self.settings.progress_patterns))

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> "ScanPool":
        return self

    def __exit__(self, *_) -> None:
        self.close()


class PendingScans:
    """The scans of one job under way: big files surveyed by the pool's workers (a very big one
    in line-aligned pieces when there are more cores than big files); `result` scans the rest
    here, then merges the pieces in order."""

    def __init__(self, logs, pool: ScanPool, contents: dict[str, tuple[bytes, float]] | None = None,
                 sizes: dict[str, int] | None = None):
        """`contents`, `sizes`: what discovery already read and stat'ed (Discovery.contents and
        .sizes), not read or stat'ed again."""
        self.logs = logs
        self.pool = pool
        self.contents = contents or {}
        self.futures: dict[int, list] = {}
        sizes = [_size(log.path, sizes or {}) for log in logs]
        progress.expect(sum(sizes))
        big = [i for i in range(len(logs)) if sizes[i] >= PARALLEL_MIN_BYTES]
        if pool.workers < 2 or not big:
            return
        pieces_per_file = -(-pool.workers // len(big))
        tasks = []
        for i in big:
            try:
                ranges = line_ranges(logs[i].path, pieces_per_file, PARALLEL_MIN_BYTES // 2)
            except OSError:
                ranges = [(0, None)]  # the survey will say what is wrong with it
            tasks += [(i, start, end) for start, end in ranges]
        if max(sizes) >= NUMPY_AFTER:
            # numpy counts the lines of files this big (reader.count_newlines): imported once
            # here, before the workers are forked, not once in every worker.
            preload_numpy()
        futures = {}
        # Largest first, so one big piece does not start last.
        for i, start, end in sorted(tasks, key=lambda t: -((t[2] or sizes[t[0]]) - t[1])):
            futures[i, start] = pool.submit(logs[i].path, start, end)
        for i, start, _ in tasks:
            self.futures.setdefault(i, []).append(futures[i, start])

    def result(self) -> list[FileScan]:
        scanner = self.pool.scanner
        scans = [None if i in self.futures else scanner.scan_file(
            log.path, log.display, content=self.contents.get(log.path), local_rank=log.local_rank)
            for i, log in enumerate(self.logs)]
        for i, futures in self.futures.items():
            log = self.logs[i]
            scans[i] = scanner.merge(log.path, log.display, [f.result() for f in futures],
                                     log.local_rank)
        return scans

    def cancel(self) -> None:
        for futures in self.futures.values():
            for future in futures:
                future.cancel()


def _size(path: str, known: dict[str, int]) -> int:
    if path in known:
        return known[path]
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


_worker_scanner: Scanner | None = None


def _die_with_parent(parent: int) -> None:
    """A worker ends when the command does, even when it is SIGKILLed and cannot say so (Linux:
    the kernel sends the worker SIGKILL then)."""
    try:
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    # The parent was gone before the call. Not `getppid() == 1`: in a container the command is
    # often process 1 itself, and its workers' parent is 1 while it lives.
    if os.getppid() != parent:
        os._exit(1)


def _init_worker(parent: int, rule_dirs, progress_patterns) -> None:
    _die_with_parent(parent)
    global _worker_scanner
    _worker_scanner = Scanner(load_catalogue(rule_dirs), progress_patterns)


def _adopt_scanner(scanner: Scanner) -> None:  # forked_pool has made it die with its parent
    global _worker_scanner
    _worker_scanner = scanner


def _survey_in_worker(path: str, start: int, end: int | None) -> Survey:
    return _worker_scanner.survey(path, start=start, end=end)
