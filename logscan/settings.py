"""What one run of logscan was asked to do: one frozen object, built in one place."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


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
