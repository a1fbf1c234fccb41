"""The pipeline: PATHs → files → events → job model → findings → diagnosis."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from logscan.catalogue import Catalogue, load_catalogue
from logscan.discovery import discover, read_job_status
from logscan.errors import InputError
from logscan.events import FileScan
from logscan.scanner import Scanner

PARALLEL_MIN_BYTES = 32 << 20  # below this, starting processes costs more than it saves


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
    extra: dict = field(default_factory=dict)


_worker_scanner: Scanner | None = None


def _init_worker(rule_dirs, progress_patterns) -> None:
    global _worker_scanner
    _worker_scanner = Scanner(load_catalogue(rule_dirs), progress_patterns)


def _scan_in_worker(path: str, display: str) -> FileScan:
    return _worker_scanner.scan_file(path, display)


def scan_files(logs, catalogue: Catalogue, settings: Settings) -> list[FileScan]:
    sizes = []
    for log in logs:
        try:
            sizes.append(os.path.getsize(log.path))
        except OSError:
            sizes.append(0)
    workers = settings.jobs or os.cpu_count() or 1
    big = sum(1 for s in sizes if s >= PARALLEL_MIN_BYTES // 4)
    if workers > 1 and big > 1 and sum(sizes) >= PARALLEL_MIN_BYTES:
        with ProcessPoolExecutor(min(workers, len(logs)), initializer=_init_worker,
                                 initargs=(settings.rule_dirs, settings.progress_patterns)) as pool:
            # Largest first, so one big file does not start last.
            order = sorted(range(len(logs)), key=lambda i: -sizes[i])
            futures = {i: pool.submit(_scan_in_worker, logs[i].path, logs[i].display) for i in order}
            return [futures[i].result() for i in range(len(logs))]
    scanner = Scanner(catalogue, settings.progress_patterns)
    return [scanner.scan_file(log.path, log.display) for log in logs]


def job_name(paths: list[str]) -> str:
    if len(paths) == 1:
        return os.path.basename(os.path.normpath(paths[0])) or paths[0]
    common = os.path.commonpath([os.path.abspath(p) for p in paths])
    return os.path.basename(common) or common


def diagnose_paths(paths: list[str], settings: Settings, catalogue: Catalogue | None = None):
    from logscan.diagnose import diagnose_job
    from logscan.model import build_job

    catalogue = catalogue or load_catalogue(settings.rule_dirs)
    found = discover(paths)
    if not found.logs:
        reasons = "; ".join(f"{p}: {why}" for p, why in found.notes[:3])
        raise InputError("no log found in " + ", ".join(paths) + (f" ({reasons})" if reasons else ""))
    scans = scan_files(found.logs, catalogue, settings)
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
