"""Which times a report may state, and the one sentence it says about them.

A line's own time is the job's. A log file's mtime is the job's only while the job may still be
writing it (the platform says it runs, or, with no platform status, the file moved within the stall
window); once the logs are collected, an mtime is when they were copied, not when the job ran. A
file's mtime is still the job's when it follows the last timed line within the stall window.
"""

from __future__ import annotations

from datetime import datetime, timezone

from logscan.model.job import Job, Worker
from logscan.vocabulary import JobStatus


def _line_time(w: Worker) -> datetime | None:
    times = [s.last_time for s in w.scans if s.last_time and s.last_time.tzinfo]
    return max(times, default=None)


def _file_time(w: Worker) -> datetime | None:
    mtimes = [s.mtime for s in w.scans if s.mtime]
    return datetime.fromtimestamp(max(mtimes), timezone.utc) if mtimes else None


def _file_time_is_the_jobs(job: Job, written: datetime, line_time: datetime | None) -> bool:
    if job.job_status == JobStatus.RUNNING:
        return True
    if job.job_status is None and job.now - written <= job.stall_after:
        return True  # a log still being written
    return line_time is not None and line_time <= written <= line_time + job.stall_after


def last_known_time(job: Job, w: Worker) -> tuple[datetime | None, bool]:
    """(when the Worker's log last moved, whether that is its file's mtime): its last timed
    line, else its file's mtime where that can be the job's time, else nothing."""
    line_time, written = _line_time(w), _file_time(w)
    if line_time is not None:
        return line_time, False
    job_line_time = max(filter(None, map(_line_time, job.workers)), default=None)
    if written is not None and _file_time_is_the_jobs(job, written, job_line_time):
        return written, True
    return None, False


def clock_note(job: Job) -> str:
    """One sentence for the report where a time it shows is a file's, or where the logs carry
    none; empty when every Worker's lines carry their own times."""
    known = [last_known_time(job, w) for w in job.workers]
    if all(when is not None and not from_file for when, from_file in known):
        return ""
    if any(from_file for _, from_file in known):
        return ("Where a line carries no time, the time shown is when its log file was last written "
                "(the job may still be writing it).")
    if any(when is not None for when, _ in known):
        return "Some lines carry no time of their own; for them no time is shown."
    return ("The lines carry no full time (date and zone), so when each stopped is not known "
            "(a file's time is when it was last written or copied, not when the job ran).")
