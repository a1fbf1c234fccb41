"""The one pipeline: PATHs → files → events → job model → findings → Diagnosis.

Every command, the benchmark and the tests call `diagnose_paths`; nothing else strings the phases
together. A sweep of many jobs passes one ScanPool so the worker processes start once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timezone

from logscan.catalogue import Catalogue, load_catalogue
from logscan.files.discovery import Discovery, discover, printable, read_job_status
from logscan.errors import InputError
from logscan.files.jobroots import refuse_merged_jobs
from logscan.scan.pool import PendingScans, ScanPool
from logscan.settings import Settings
from logscan.vocabulary import JobStatus

# Called with the name of each phase as it ends: how bench/profile_phases.py times them.
PhaseHook = Callable[[str], None]


def job_name(paths: list[str]) -> str:
    if len(paths) == 1:
        # `logscan scan .` names the directory it is in, not `.`
        return printable(os.path.basename(os.path.abspath(paths[0])) or paths[0])
    common = os.path.commonpath([os.path.abspath(p) for p in paths])
    return printable(os.path.basename(common) or common)


def platform_status(paths: list[str], found: Discovery,
                    settings: Settings) -> tuple[JobStatus | None, str | None]:
    """(what the platform reported, where that came from): the flag, else a job_status file."""
    if settings.job_status:
        return settings.job_status, "--job-status"
    candidates = found.job_status_files + [
        os.path.join(os.path.dirname(p) or ".", "job_status") for p in paths if not os.path.isdir(p)]
    read = read_job_status(candidates)
    return read if read is not None else (None, None)


def diagnose_paths(paths: list[str], settings: Settings, catalogue: Catalogue | None = None,
                   pool: ScanPool | None = None, on_phase: PhaseHook | None = None):
    lap = on_phase or (lambda _name: None)
    catalogue = catalogue or load_catalogue(settings.rule_dirs)
    lap("catalogue")
    found = discover(paths)
    if not found.logs:
        reasons = "; ".join(f"{p}: {why}" for p, why in found.notes[:3])
        raise InputError("no log found in " + ", ".join(paths) + (f" ({reasons})" if reasons else ""))
    lap("discover")
    own_pool = pool is None
    pool = pool or ScanPool(catalogue, settings)
    try:
        pending = PendingScans(found.logs, pool, found.contents, found.sizes)
        try:
            # Imported while big files are being scanned: the model and rules take a few tens of ms.
            import logscan.diagnose.build  # noqa: F401
            import logscan.model.build  # noqa: F401
        except BaseException:
            pending.cancel()
            raise
        scans = pending.result()
    finally:
        if own_pool:
            pool.close()
    lap("scan")
    # One job only: several run directories' logs are never merged into one diagnosis.
    refuse_merged_jobs(paths, found, scans)
    status, status_source = platform_status(paths, found, settings)
    return diagnose_scans(job_name(paths), found, scans, catalogue, settings, status, status_source,
                          settings.now or datetime.now(timezone.utc), lap)


def diagnose_scans(name: str, found: Discovery, scans, catalogue: Catalogue, settings: Settings,
                   status: str | None, status_source: str | None, now: datetime,
                   on_phase: PhaseHook | None = None, on_model: Callable[..., None] | None = None):
    """The back half: what the files said (FileScans) → job model → Diagnosis. A sweep that kept
    each file's scan calls this without reading the files again; its `on_model(job, diagnosis)`
    takes from the job model what the Diagnosis does not hold (a healthy run's templates)."""
    from logscan.diagnose.build import diagnose_job
    from logscan.model.build import build_job

    lap = on_phase or (lambda _name: None)
    job = build_job(name, found.logs, scans, catalogue, job_status=status,
                    job_status_source=status_source, now=now, stall_after=settings.stall_after)
    lap("job model")
    diagnosis = diagnose_job(job, settings, found)
    lap("rules and root cause")
    if on_model is not None:
        on_model(job, diagnosis)
    return diagnosis
