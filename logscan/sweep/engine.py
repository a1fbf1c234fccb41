"""One sweep: walk, decide which jobs need work, refresh them, commit each job in its own
transaction, then hand the outbox (changes not yet delivered, this sweep's and any a killed
sweep left) to the caller, which acknowledges what it delivered.

A job is refreshed when one of its files or its job_status file changed identity, when it is new,
when logscan, the rules or the settings changed since it was diagnosed, or when time alone may
change its verdict (a Worker's last activity passing --stall-after). Otherwise nothing of it is
opened and its stored diagnosis stands. The job model and rules are imported only when a job
needs diagnosing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from logscan.sweep import state as st
from logscan.sweep.changes import change_of, root_fingerprint
from logscan.sweep.reading import Counters, FileReader, FileRecord, JobResult, refresh, status_signature
from logscan.sweep.tree import JobDir, find_jobs, shard_of

# Fewer jobs than this to refresh: done in this process (big files still split across the
# ScanPool's workers); more: one job per task across forked processes, every core busy.
FAN_OUT_MIN_JOBS = 8
PAYLOAD_SCHEMA_VERSION = 1


@dataclass
class SweepReport:
    started: float
    duration: float = 0.0
    jobs: int = 0
    refreshed: int = 0
    removed: int = 0
    counters: Counters = field(default_factory=Counters)
    pending: list[tuple[int, dict]] = field(default_factory=list)   # (outbox seq, change payload)

    @property
    def changes(self) -> list[dict]:
        return [payload for _, payload in self.pending]


class Sweep:
    """A sweep over DIRs with one state file. Use as a context manager: the lock is held from
    `open` to `close`."""

    def __init__(self, dirs: list[str], state_path: Path, settings, catalogue,
                 shard: tuple[int, int] | None = None, pool=None):
        self.dirs = dirs
        self.state_path = state_path
        self.settings = settings
        self.catalogue = catalogue
        self.shard = shard
        self.pool = pool
        self.lock = st.Lock(state_path)
        self.db = None

    def __enter__(self) -> "Sweep":
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        self.lock.acquire()
        try:
            self.db = st.connect(self.state_path)
        except BaseException:
            self.lock.release()
            raise
        return self

    def __exit__(self, *_) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        self.lock.release()

    # -- the sweep -----------------------------------------------------------------------------

    def run(self, on_start: Callable[[int], None] | None = None,
            on_job: Callable[[], None] | None = None) -> SweepReport:
        db, settings = self.db, self.settings
        now = settings.now or datetime.now(timezone.utc)
        report = SweepReport(started=time.time())
        sweep_id = db.execute("INSERT INTO sweeps (started) VALUES (?)", (report.started,)).lastrowid
        reading_code, diagnosis_code = st.code_fingerprint(
            [r.source for r in (*self.catalogue.rules.values(), *self.catalogue.signals.values())],
            extra=repr((settings.progress_patterns,)))
        diagnosis_code += ":" + _settings_key(settings)
        if st.get_meta(db, "reading_code") != reading_code:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM files")  # surveys made by other code or rules: read again
            st.set_meta(db, "reading_code", reading_code)
            db.execute("COMMIT")

        jobs = find_jobs(self.dirs, self.shard)
        report.jobs = len(jobs)
        known_files: dict[str, dict[str, tuple]] = {}
        for path, job, *identity in db.execute(
                "SELECT path, job, dev, ino, size, mtime_ns FROM files"):
            known_files.setdefault(job, {})[path] = tuple(identity)
        known_jobs = {row[0]: row for row in db.execute(
            "SELECT job, root, rel, verdict, root_fingerprint, status_sig, status, wake_at, code "
            "FROM jobs")}
        self._forget_vanished(jobs, known_jobs, known_files, report)

        stale = []
        for key, job in sorted(jobs.items()):
            row = known_jobs.get(key)
            current = {f.path: f.identity for f in job.files}
            if (row is None or known_files.get(key, {}) != current or row[8] != diagnosis_code
                    or status_signature(job) != row[5]
                    or (row[7] is not None and row[7] <= now.timestamp())):
                stale.append(job)
        report.refreshed = len(stale)
        if on_start is not None:
            on_start(len(stale))
        for result in self._refresh(stale, known_jobs, now):
            self._commit(result, known_jobs.get(result.job.job), diagnosis_code, now)
            report.counters.add(result.counters)
            if on_job is not None:
                on_job()
        report.pending = self.pending()
        report.duration = time.time() - report.started
        db.execute("UPDATE sweeps SET finished = ?, jobs = ?, refreshed = ?, changes = ?, "
                   "files_opened = ?, bytes_read = ? WHERE id = ?",
                   (time.time(), report.jobs, report.refreshed, len(report.pending),
                    report.counters.files_opened, report.counters.bytes_read, sweep_id))
        db.execute("DELETE FROM sweeps WHERE id <= ?", (sweep_id - 1000,))
        return report

    def _forget_vanished(self, jobs, known_jobs, known_files, report) -> None:
        """Jobs of the swept DIRs (and shard) whose run directory is gone leave the state."""
        roots = {os.path.abspath(d) for d in self.dirs}
        for key, row in list(known_jobs.items()):
            if key in jobs or row[1] not in roots:
                continue
            if self.shard is not None and shard_of(row[2], self.shard[1]) != self.shard[0]:
                continue
            self.db.execute("BEGIN IMMEDIATE")
            for table in ("files", "jobs", "alerted"):
                self.db.execute(f"DELETE FROM {table} WHERE job = ?", (key,))
            self.db.execute("COMMIT")
            del known_jobs[key]
            known_files.pop(key, None)
            report.removed += 1

    def _old_records(self, key: str) -> dict[str, FileRecord]:
        rows = self.db.execute(
            "SELECT path, job, dev, ino, size, mtime_ns, kind, compressed, committed, edge, surveys "
            "FROM files WHERE job = ?", (key,))
        return {r[0]: FileRecord(*r[:7], bool(r[7]), *r[8:]) for r in rows}

    def _refresh(self, stale: list[JobDir], known_jobs, now):
        tasks = [(job, self._old_records(job.job), *(known_jobs[job.job][5:7] if job.job in known_jobs
                                                      else (None, None))) for job in stale]
        workers = self.settings.processes or _usable_cores()
        if len(tasks) < FAN_OUT_MIN_JOBS or workers < 2:
            for job, old, sig, status in tasks:
                reader = FileReader(self.pool.scanner if self.pool else _scanner(self.catalogue, self.settings),
                                    self.pool)
                yield refresh(job, old, reader, self.catalogue, self.settings, now, sig, status)
            return
        yield from _fan_out(tasks, self.catalogue, self.settings, now, workers,
                            self.pool.scanner if self.pool else None)

    def _commit(self, result: JobResult, previous, diagnosis_code: str, now: datetime) -> None:
        """One job's files, diagnosis, fingerprints and change: one transaction."""
        db, job = self.db, result.job
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM files WHERE job = ?", (job.job,))
        db.executemany(
            "INSERT OR REPLACE INTO files (path, job, dev, ino, size, mtime_ns, kind, compressed, "
            "committed, edge, surveys) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(r.path, r.job, r.dev, r.ino, r.size, r.mtime_ns, r.kind, int(r.compressed),
              r.committed, r.edge, r.surveys) for r in result.records])
        diagnosis = result.diagnosis
        if diagnosis is None:
            db.execute("DELETE FROM jobs WHERE job = ?", (job.job,))
            db.execute("COMMIT")
            return
        from logscan.render.json_v1 import diagnosis_record

        record = diagnosis_record(diagnosis)
        fingerprint = root_fingerprint(diagnosis)
        alerted = fingerprint is not None and db.execute(
            "SELECT 1 FROM alerted WHERE job = ? AND fingerprint = ?", (job.job, fingerprint)
        ).fetchone() is not None
        before = previous[3] if previous else None
        change = change_of(before, previous[4] if previous else None, diagnosis, alerted)
        stamp = time.time()
        rules: dict[str, int] = {}
        for finding in diagnosis.findings:
            rules[finding.rule] = rules.get(finding.rule, 0) + 1
        activity = max((w.last_activity for w in diagnosis.workers if w.last_activity), default=None)
        root = diagnosis.root_cause
        db.execute(
            "INSERT INTO jobs (job, shown, root, rel, verdict, root_rule, root_fingerprint, summary, "
            "workers, last_activity, status_sig, status, wake_at, first_seen, changed_at, "
            "diagnosed_at, code, rules, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?) ON CONFLICT (job) DO UPDATE SET shown = excluded.shown, "
            "verdict = excluded.verdict, root_rule = excluded.root_rule, "
            "root_fingerprint = excluded.root_fingerprint, summary = excluded.summary, "
            "workers = excluded.workers, last_activity = excluded.last_activity, "
            "status_sig = excluded.status_sig, status = excluded.status, wake_at = excluded.wake_at, "
            "changed_at = CASE WHEN jobs.verdict != excluded.verdict "
            "OR jobs.root_fingerprint IS NOT excluded.root_fingerprint THEN excluded.changed_at "
            "ELSE jobs.changed_at END, diagnosed_at = excluded.diagnosed_at, code = excluded.code, "
            "rules = excluded.rules, record = excluded.record",
            (job.job, job.shown, job.root, job.rel, diagnosis.verdict, root.rule if root else None,
             fingerprint, diagnosis.summary(), len(diagnosis.workers), activity, result.status_sig,
             result.status, result.wake_at, stamp, stamp, stamp, diagnosis_code,
             json.dumps(rules, sort_keys=True), json.dumps(record, sort_keys=True)))
        if fingerprint is not None:
            db.execute("INSERT OR IGNORE INTO alerted (job, fingerprint, at) VALUES (?, ?, ?)",
                       (job.job, fingerprint, stamp))
        if change is not None:
            payload = {"schema_version": PAYLOAD_SCHEMA_VERSION, "job_id": job.shown,
                       "job_path": job.job, "change": change, "previous_verdict": before,
                       "swept_at": datetime.fromtimestamp(stamp, timezone.utc).isoformat(), **record}
            db.execute("INSERT INTO outbox (job, change, payload) VALUES (?, ?, ?)",
                       (job.job, change, json.dumps(payload, sort_keys=True)))
        db.execute("COMMIT")

    # -- delivery ------------------------------------------------------------------------------

    def pending(self) -> list[tuple[int, dict]]:
        """Changes not yet delivered, oldest first."""
        return [(seq, json.loads(payload)) for seq, payload in
                self.db.execute("SELECT seq, payload FROM outbox ORDER BY seq")]

    def acknowledge(self, seqs: list[int]) -> None:
        """These changes were delivered: never again."""
        self.db.execute("BEGIN IMMEDIATE")
        self.db.executemany("DELETE FROM outbox WHERE seq = ?", [(s,) for s in seqs])
        self.db.execute("COMMIT")

    def all_jobs(self) -> list[dict]:
        """Every job of the swept DIRs (and shard) as last diagnosed, by job id."""
        roots = sorted({os.path.abspath(d) for d in self.dirs})
        marks = ",".join("?" * len(roots))
        rows = self.db.execute(
            f"SELECT shown, rel, record, first_seen, changed_at, diagnosed_at, root FROM jobs "
            f"WHERE root IN ({marks}) ORDER BY shown", roots).fetchall()
        out = []
        for shown, rel, record, first_seen, changed_at, diagnosed_at, root in rows:
            if self.shard is not None and shard_of(rel, self.shard[1]) != self.shard[0]:
                continue
            out.append({"job_id": shown, "rel": rel, "root": root, "first_seen": first_seen,
                        "changed_at": changed_at, "diagnosed_at": diagnosed_at,
                        **json.loads(record)})
        return out


def _settings_key(settings) -> str:
    return repr((sorted(settings.select), sorted(settings.ignore), settings.stall_after,
                 settings.rule_dirs))


def _usable_cores() -> int:
    from logscan.scan.pool import usable_cores

    return usable_cores()


def _scanner(catalogue, settings):
    from logscan.scan.scanner import Scanner

    return Scanner(catalogue, settings.progress_patterns)


# -- fan-out across processes ---------------------------------------------------------------------

_worker: dict = {}


def _refresh_task(task) -> JobResult:
    job, old, sig, status = task
    reader = FileReader(_worker["scanner"])
    return refresh(job, old, reader, _worker["catalogue"], _worker["settings"], _worker["now"],
                   sig, status)


def _fan_out(tasks, catalogue, settings, now, workers, scanner):
    """Jobs refreshed in forked processes, which inherit the scanner, catalogue and settings
    (and the job model and rules, imported first so each child does not import them again)."""
    import logscan.diagnose.build  # noqa: F401  (loaded once, before the fork)
    import logscan.model.build  # noqa: F401
    from logscan.scan.pool import forked_pool

    _worker.update(scanner=scanner or _scanner(catalogue, settings), catalogue=catalogue,
                   settings=settings, now=now)
    executor = forked_pool(min(workers, len(tasks)))
    if executor is None:
        for task in tasks:
            yield _refresh_task(task)
        return
    with executor:
        yield from executor.map(_refresh_task, tasks, chunksize=max(1, min(16, len(tasks) // (4 * workers))))
