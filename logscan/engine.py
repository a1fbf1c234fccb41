"""The pipeline: PATHs → files → events → job model → findings → diagnosis."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from logscan.catalogue import Catalogue, load_catalogue
from logscan.discovery import discover, printable, read_job_status
from logscan.errors import InputError
from logscan.events import FileScan
from logscan.reader import line_ranges
from logscan.scanner import Scanner, Survey

# A file this big is surveyed in worker processes: starting one costs ~20 ms, and meanwhile this
# process loads the job model (pandas), so even a single big log gains.
PARALLEL_MIN_BYTES = 8 << 20


@dataclass(frozen=True)
class Settings:
    rule_dirs: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    progress_patterns: tuple[str, ...] = ()
    job_status: str | None = None
    now: datetime | None = None
    stall_after: timedelta = timedelta(minutes=30)
    jobs: int = 0  # worker processes for scanning; 0 = one per core



def usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's core count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class PendingScans:
    """Scans under way: big files surveyed in worker processes, a very big one in line-aligned
    pieces when there are more cores than big files; the rest is scanned here by `result`."""

    def __init__(self, logs, catalogue: Catalogue, settings: Settings,
                 contents: dict[str, tuple[bytes, float]] | None = None):
        self.logs = logs
        self.settings = settings
        self.contents = contents or {}
        self.scanner = Scanner(catalogue, settings.progress_patterns)
        self.pool = None
        self.futures: dict[int, list] = {}
        sizes = []
        for log in logs:
            try:
                sizes.append(os.path.getsize(log.path))
            except OSError:
                sizes.append(0)
        big = [i for i in range(len(logs)) if sizes[i] >= PARALLEL_MIN_BYTES]
        workers = settings.jobs or usable_cores()
        if workers < 2 or not big:
            return
        pieces_per_file = -(-workers // len(big))
        tasks = []
        for i in big:
            try:
                ranges = line_ranges(logs[i].path, pieces_per_file, PARALLEL_MIN_BYTES // 2)
            except OSError:
                ranges = [(0, None)]  # the survey will say what is wrong with it
            tasks += [(i, start, end) for start, end in ranges]
        self._start_pool(min(workers, len(tasks)))
        futures = {}
        # Largest first, so one big piece does not start last.
        for i, start, end in sorted(tasks, key=lambda t: -((t[2] or sizes[t[0]]) - t[1])):
            futures[i, start] = self.pool.submit(_survey_in_worker, logs[i].path, start, end)
        for i, start, _ in tasks:
            self.futures.setdefault(i, []).append(futures[i, start])

    def _start_pool(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if "fork" in multiprocessing.get_all_start_methods():
            # The workers inherit this process's scanner: no catalogue to load again.
            context = multiprocessing.get_context("fork")
            initializer, initargs = _adopt_scanner, (self.scanner,)
        else:
            context = None
            initializer = _init_worker
            initargs = (self.settings.rule_dirs, self.settings.progress_patterns)
        self.pool = ProcessPoolExecutor(workers, mp_context=context, initializer=initializer,
                                        initargs=initargs)

    def result(self) -> list[FileScan]:
        try:
            scans = [None if i in self.futures else self.scanner.scan_file(
                log.path, log.display, content=self.contents.get(log.path))
                for i, log in enumerate(self.logs)]
            for i, futures in self.futures.items():
                log = self.logs[i]
                scans[i] = self.scanner.merge(log.path, log.display, [f.result() for f in futures])
            return scans
        finally:
            self.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


_worker_scanner: Scanner | None = None


def _init_worker(rule_dirs, progress_patterns) -> None:
    global _worker_scanner
    _worker_scanner = Scanner(load_catalogue(rule_dirs), progress_patterns)


def _adopt_scanner(scanner: Scanner) -> None:
    global _worker_scanner
    _worker_scanner = scanner


def _survey_in_worker(path: str, start: int, end: int | None) -> Survey:
    return _worker_scanner.survey(path, start=start, end=end)


def scan_files(logs, catalogue: Catalogue, settings: Settings) -> list[FileScan]:
    return PendingScans(logs, catalogue, settings).result()


def job_name(paths: list[str]) -> str:
    if len(paths) == 1:
        return printable(os.path.basename(os.path.normpath(paths[0])) or paths[0])
    common = os.path.commonpath([os.path.abspath(p) for p in paths])
    return printable(os.path.basename(common) or common)


def diagnose_paths(paths: list[str], settings: Settings, catalogue: Catalogue | None = None):
    catalogue = catalogue or load_catalogue(settings.rule_dirs)
    found = discover(paths)
    if not found.logs:
        reasons = "; ".join(f"{p}: {why}" for p, why in found.notes[:3])
        raise InputError("no log found in " + ", ".join(paths) + (f" ({reasons})" if reasons else ""))
    pending = PendingScans(found.logs, catalogue, settings, found.contents)
    try:
        # Imported while big files are being scanned: pandas alone takes ~0.3 s to load.
        from logscan.diagnose import diagnose_job
        from logscan.model import build_job
    except BaseException:
        pending.close()
        raise
    scans = pending.result()
    status, status_source = settings.job_status, "--job-status" if settings.job_status else None
    if status is None:
        candidates = found.job_status_files + [
            os.path.join(os.path.dirname(p) or ".", "job_status") for p in paths if not os.path.isdir(p)]
        if (read := read_job_status(candidates)) is not None:
            status, status_source = read
    job = build_job(job_name(paths), found.logs, scans, catalogue, job_status=status,
                    job_status_source=status_source,
                    now=settings.now or datetime.now(timezone.utc), stall_after=settings.stall_after)
    return diagnose_job(job, settings, found)
