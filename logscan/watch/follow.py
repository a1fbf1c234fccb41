"""Follow one job while it runs: read only what was appended, diagnose only when something changed.

A poll costs one walk of the job's directory (stat calls, no reads) when nothing changed. The job is
diagnosed again when a file grew, appeared, was rotated or truncated (sweep.reading does the
reading, as for a sweep: appended bytes only, gzip segments once), when its job_status changed, or
when time alone can change the diagnosis: a stall is a matter of time passing (sweep.reading.wake_at).

While watched, the job is taken as running: silence longer than its rhythm or `--stall-after` is a
stall, as in a sweep of a running job. It has ended when the platform's job_status says so, when the
launch process given by `--pid` is gone, or when the logs show the end of a finished run and every
log has been quiet for `QUIET_AT_END`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from logscan.errors import InputError
from logscan.sweep.reading import FileReader, FileRecord, read_status, survey_job, wake_at
from logscan.sweep.tree import find_jobs
from logscan.vocabulary import JobStatus, Severity, Verdict

# A finished run's last lines may come a moment before its other Workers' (rank 0 prints "done"
# while the others flush): the end is declared once every log has been this quiet.
QUIET_AT_END = timedelta(seconds=5)
# After a failure torchrun tears the job down within seconds, unless it restarts the worker group
# (whose new attempt writes again): a failed job whose logs stayed this quiet has ended.
QUIET_AFTER_FAILURE = timedelta(seconds=30)
# How often the directory is looked at; CPU between writes is one walk per poll.
POLL_INTERVAL = 1.0
# Workers' logs do not arrive in the order things happened: a peer's "connection reset" can be
# written before the failing rank's traceback is flushed through tee. A finding is told once it has
# stood this long, or once every log has been this quiet, so the cause seen is the settled one.
SETTLE = timedelta(seconds=3)

WATCHED = "watched while it runs"


def finding_identity(finding) -> tuple:
    """A finding told once however its evidence grows: its rule and place."""
    return (finding.rule, finding.node_rank, finding.rank, finding.worker)


@dataclass(frozen=True)
class Update:
    """What one look at the job found."""

    diagnosis: object                 # the Diagnosis of the job as it stands
    new: tuple = ()                   # findings not told before, in the diagnosis' order
    ended: bool = False               # the job is over: `diagnosis` is its final verdict
    ended_because: str = ""


def diagnosis_is_a_hang(diagnosis) -> bool:
    """A hung job is quiet because it hangs, not because it ended: its silence ends nothing."""
    return diagnosis.root_cause is not None and diagnosis.root_cause.hang


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process, still there
    return True


@dataclass
class Follower:
    """One job's directory, followed: call `poll()` as often as wanted; it reads only what changed."""

    directory: str
    settings: object
    catalogue: object
    scanner: object
    pid: int | None = None
    clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
    told: set = field(default_factory=set)
    _seen_since: dict = field(default_factory=dict)   # a finding not told yet: when first seen
    _records: dict[str, FileRecord] = field(default_factory=dict)
    _identities: tuple = ()
    _status: str | None = None
    _status_sig: str | None = None
    _wake: float | None = None
    _diagnosis: object = None
    _newest: float = 0.0

    def _job(self):
        walk = find_jobs([self.directory])
        if len(walk.jobs) > 1:
            raise InputError(f"{self.directory} holds {len(walk.jobs)} jobs' logs: watch one run's "
                             "directory (logscan sweep follows many)")
        return next(iter(walk.jobs.values()), None)

    def poll(self) -> Update | None:
        """The job's state now; None while it has no log yet."""
        now = self.clock()
        job = self._job()
        if job is None:
            return None
        identities = tuple((f.path, f.identity) for f in job.files + job.status_files)
        launcher_gone = self.pid is not None and not _pid_alive(self.pid)
        changed = identities != self._identities
        due = self._wake is not None and now.timestamp() >= self._wake
        if not (changed or due or launcher_gone or self._diagnosis is None):
            return Update(self._diagnosis)
        self._identities = identities
        reader = FileReader(self.scanner)
        surveyed = survey_job(job, self._records, reader)
        self._records = {r.path: r for r in surveyed.records}
        self._newest = surveyed.newest
        self._status, self._status_sig = read_status(reader, job, self._status_sig, self._status)
        if not surveyed.scans:
            return None
        return self._judge(job, surveyed, now, launcher_gone)

    def _diagnose(self, job, surveyed, now, status, source):
        from logscan.diagnose.pipeline import diagnose_scans

        return diagnose_scans(job.shown, surveyed.found, surveyed.scans, self.catalogue, self.settings,
                              status, source, now)

    def _judge(self, job, surveyed, now: datetime, launcher_gone: bool) -> Update:
        platform = self._status
        if platform is not None and platform != JobStatus.RUNNING:
            diagnosis = self._diagnose(job, surveyed, now, platform, job.status_files[0].path)
            return self._update(diagnosis, now, surveyed.newest, True, f"the platform says {platform}")
        diagnosis = self._diagnose(job, surveyed, now, JobStatus.RUNNING, WATCHED)
        silence = now.timestamp() - surveyed.newest
        if diagnosis.verdict != Verdict.RUNNING:
            # Something failed or hung while the job runs: told now; the watch goes on only to
            # tell later findings (--keep-going), until the job is over.
            if launcher_gone:
                return self._update(diagnosis, now, surveyed.newest, True, f"process {self.pid} ended")
            over = silence >= QUIET_AFTER_FAILURE.total_seconds() and not diagnosis_is_a_hang(diagnosis)
            return self._update(diagnosis, now, surveyed.newest, over,
                                "no line since the failure for %d s" % silence if over else "")
        quiet = silence >= QUIET_AT_END.total_seconds()
        if launcher_gone or quiet:
            # Judged by its logs alone: a run that printed its end is HEALTHY; one whose launch
            # process is gone without an end is what its lines say.
            final = self._diagnose(job, surveyed, now, None, None)
            if launcher_gone:
                return self._update(final, now, surveyed.newest, True, f"process {self.pid} ended")
            if final.verdict == Verdict.HEALTHY:
                return self._update(final, now, surveyed.newest, True, "the logs show the end of the run")
        return self._update(diagnosis, now, surveyed.newest, False, "")

    def _update(self, diagnosis, now: datetime, newest: float, ended: bool, because: str) -> Update:
        self._diagnosis = diagnosis
        # The next moment time alone can change what is told: a stall's threshold, the quiet
        # that ends a finished or failed run, a finding's settling.
        moments = [wake_at(diagnosis, newest, self.settings.stall_after, now, live_guess=True)]
        if not ended:
            quiet = QUIET_AFTER_FAILURE if diagnosis.verdict == Verdict.FAILED else QUIET_AT_END
            moments.append(newest + quiet.total_seconds())
        future = [m for m in moments if m is not None and m > now.timestamp()]
        self._wake = min(future) if future else None
        settled = ended or now.timestamp() - newest >= SETTLE.total_seconds()
        present, new = set(), []
        for finding in diagnosis.findings:
            # A consequence is told with its cause (in the report), not as news of its own.
            if finding.severity == Severity.INFO or finding.is_consequence:
                continue
            identity = finding_identity(finding)
            present.add(identity)
            if identity in self.told:
                continue
            since = self._seen_since.setdefault(identity, now)
            if settled or now - since >= SETTLE:
                self.told.add(identity)
                new.append(finding)
        # One seen only while the logs were catching up is forgotten, untold.
        self._seen_since = {k: v for k, v in self._seen_since.items() if k in present and k not in self.told}
        if self._seen_since:
            first_due = (min(self._seen_since.values()) + SETTLE).timestamp()
            self._wake = first_due if self._wake is None else min(self._wake, first_due)
        return Update(diagnosis, tuple(new), ended, because)
