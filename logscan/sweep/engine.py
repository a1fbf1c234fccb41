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
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from logscan.files.discovery import printable
from logscan.sweep import history
from logscan.sweep import state as st
from logscan.sweep.changes import (FAILED_CHANGES, FINGERPRINT_VERSION, change_of, root_fingerprint,
                                   told_before)
from logscan.sweep.reading import Counters, FileReader, FileRecord, JobResult, refresh, status_signature
from logscan.sweep.series import DEFAULT_SERIES_MODE, SeriesMode, place_of, run_order
from logscan.sweep.tree import JobDir, Walk, find_jobs, shard_of

# Fewer jobs than this to refresh: done in this process (big files still split across the
# ScanPool's workers); more: one job per task across forked processes, every core busy.
FAN_OUT_MIN_JOBS = 8
# Jobs handed to the forked processes ahead of the one being committed: enough to keep every
# core busy, few enough that memory does not grow with the number of jobs.
FAN_OUT_AHEAD_PER_WORKER = 4
# Outbox rows read at a time while delivering.
OUTBOX_BATCH = 256
# Changes owed to no webhook that no listing has printed (a state swept only for its --summary,
# --prometheus or --export) are kept up to this many, the latest: the state does not grow for ever.
OUTBOX_UNPRINTED_KEPT = 10_000
PAYLOAD_SCHEMA_VERSION = 1


@dataclass
class SweepReport:
    started: float
    duration: float = 0.0
    jobs: int = 0
    refreshed: int = 0
    removed: int = 0
    counters: Counters = field(default_factory=Counters)
    changes: int = 0          # changes to print: this sweep's and any a killed sweep left
    unwalkable: list[tuple[str, str]] = field(default_factory=list)   # (directory, why)
    unreadable: list[tuple[str, str]] = field(default_factory=list)   # (file, why): job kept
    empty: list[tuple[str, int]] = field(default_factory=list)        # (swept DIR, jobs kept)


class Sweep:
    """A sweep over DIRs with one state file. Use as a context manager: the lock is held from
    `open` to `close`."""

    def __init__(self, dirs: list[str], state_path: Path, settings, catalogue,
                 shard: tuple[int, int] | None = None, pool=None,
                 series: SeriesMode = DEFAULT_SERIES_MODE):
        self.dirs = dirs
        self.series = series
        self.state_path = state_path
        self.settings = settings
        self.catalogue = catalogue
        self.shard = shard
        self.pool = pool
        self.lock: st.Lock | None = None
        self.db = None

    def __enter__(self) -> "Sweep":
        try:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from logscan.errors import InputError

            raise InputError(f"cannot create the state's directory {self.state_path.parent}: "
                             f"{exc.strerror or exc}: pass another --state") from None
        real = st.real_state_path(self.state_path)
        self.lock = st.Lock(real)
        self.lock.acquire()
        try:
            self.db = st.connect(real)
        except BaseException:
            self.lock.release()
            raise
        return self

    def __exit__(self, *_) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        if self.lock is not None:
            self.lock.release()

    # -- the sweep -----------------------------------------------------------------------------

    def run(self, on_start: Callable[[int], None] | None = None,
            on_job: Callable[[], None] | None = None) -> SweepReport:
        db, settings = self.db, self.settings
        now = settings.now or datetime.now(timezone.utc)
        report = SweepReport(started=time.time())
        sweep_id = db.execute("INSERT INTO sweeps (started) VALUES (?)", (report.started,)).lastrowid
        reading_code, own_code, operators = st.code_fingerprint(
            [r.source for r in (*self.catalogue.rules.values(), *self.catalogue.signals.values())],
            extra=repr((settings.progress_patterns,)))
        # logscan's own code, then the operator's choices (see _code_of)
        diagnosis_code = f"{own_code}:{operators}:{_settings_key(settings)}:series={self.series}"
        if st.get_meta(db, "series_mode") != self.series:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM history")  # series grouped another way: learnt again
            st.set_meta(db, "series_mode", str(self.series))
            db.execute("COMMIT")
        walk = find_jobs(self.dirs, self.shard)
        jobs = walk.jobs
        report.jobs = len(jobs)
        report.unwalkable = walk.unwalkable
        known_files: dict[str, dict[str, tuple]] = {}
        for path, job, *identity in db.execute(
                "SELECT path, job, dev, ino, size, mtime_ns FROM files"):
            known_files.setdefault(st.loaded_path(job), {})[st.loaded_path(path)] = tuple(identity)
        if st.get_meta(db, "reading_code") != reading_code:
            # Surveys made by other code or rules: read again. What the files were is kept above,
            # so a job is not taken for one whose logs changed.
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM files")
            st.set_meta(db, "reading_code", reading_code)
            db.execute("COMMIT")
        known_jobs = {}
        for row in db.execute("SELECT job, root, rel, verdict, root_fingerprint, status_sig, status, "
                              "wake_at, code, root_rule FROM jobs"):
            row = (st.loaded_path(row[0]), st.loaded_path(row[1]), st.loaded_path(row[2]), *row[3:])
            known_jobs[row[0]] = row
        unseen = self._unseen(walk, known_jobs, report)
        self._forget_vanished(jobs, known_jobs, known_files, unseen, report)

        stale, by_options = [], set()
        for key, job in sorted(jobs.items()):
            row = known_jobs.get(key)
            if row is not None and key in unseen:
                continue  # part of it could not be seen: its record stands until it can be
            current = {f.path: f.identity for f in job.files}
            if (row is None or known_files.get(key, {}) != current or status_signature(job) != row[5]
                    or (row[7] is not None and row[7] <= now.timestamp())):
                stale.append(job)
            elif row[8] != diagnosis_code:
                stale.append(job)
                if _code_of(row[8]) == _code_of(diagnosis_code):
                    by_options.add(key)
        del known_files
        # A series' runs in its order (run-9 before run-10), so that each failing run is committed
        # after the healthy runs before it, in a first sweep as in later ones.
        stale.sort(key=lambda job: run_order(job.job))
        report.refreshed = len(stale)
        if on_start is not None:
            on_start(len(stale))
        for result in self._refresh(stale, known_jobs, now):
            if result.unreadable:  # kept as it was, and read again by the next sweep
                report.unreadable += [(printable(path), why) for path, why in result.unreadable]
            else:
                self._commit(result, known_jobs.get(result.job.job), diagnosis_code, now,
                             result.job.job in by_options)
            report.counters.add(result.counters)
            if on_job is not None:
                on_job()
        db.execute("DELETE FROM outbox WHERE posted = 1 AND printed = 0 AND seq <= (SELECT seq FROM "
                   "outbox WHERE posted = 1 AND printed = 0 ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                   (OUTBOX_UNPRINTED_KEPT,))
        report.changes = db.execute("SELECT count(*) FROM outbox WHERE printed = 0").fetchone()[0]
        report.duration = time.time() - report.started
        db.execute("UPDATE sweeps SET finished = ?, jobs = ?, refreshed = ?, changes = ?, "
                   "files_opened = ?, bytes_read = ? WHERE id = ?",
                   (time.time(), report.jobs, report.refreshed, report.changes,
                    report.counters.files_opened, report.counters.bytes_read, sweep_id))
        db.execute("DELETE FROM sweeps WHERE id <= ?", (sweep_id - 1000,))
        return report

    def _unseen(self, walk: Walk, known_jobs, report: SweepReport) -> set[str]:
        """Known jobs that this walk could not see whole: under or inside a directory it could
        not list, or under a swept DIR that was found empty (an unmounted filesystem looks so)."""
        empty = set(walk.empty)
        unseen = set()
        for root in walk.empty:
            held = sum(1 for row in known_jobs.values() if row[1] == root)
            if held:
                report.empty.append((printable(root), held))
        for key, row in known_jobs.items():
            if row[1] in empty or (walk.unwalkable and walk.hidden(key) is not None):
                unseen.add(key)
        return unseen

    def _forget_vanished(self, jobs, known_jobs, known_files, unseen, report) -> None:
        """Jobs of the swept DIRs (and shard) whose run directory is gone leave the state; not
        those the walk could not see."""
        roots = {os.path.abspath(d) for d in self.dirs}
        for key, row in list(known_jobs.items()):
            if key in jobs or key in unseen or row[1] not in roots:
                continue
            if self.shard is not None and shard_of(row[2], self.shard[1]) != self.shard[0]:
                continue
            self.db.execute("BEGIN IMMEDIATE")
            for table in ("files", "jobs", "alerted", "history"):
                self.db.execute(f"DELETE FROM {table} WHERE job = ?", (st.stored_path(key),))
            self.db.execute("COMMIT")
            del known_jobs[key]
            known_files.pop(key, None)
            report.removed += 1

    def _old_records(self, key: str) -> dict[str, FileRecord]:
        rows = self.db.execute(
            "SELECT path, job, dev, ino, size, mtime_ns, kind, compressed, committed, edge, surveys "
            "FROM files WHERE job = ?", (st.stored_path(key),))
        return {st.loaded_path(r[0]): FileRecord(st.loaded_path(r[0]), st.loaded_path(r[1]), *r[2:7],
                                                 bool(r[7]), *r[8:]) for r in rows}

    def _refresh(self, stale: list[JobDir], known_jobs, now):
        # One job's stored records at a time, as it is handed out: never every job's at once.
        tasks = ((job, self._old_records(job.job), *(known_jobs[job.job][5:7] if job.job in known_jobs
                                                      else (None, None)),
                  place_of(job.root, job.rel, self.series) is not None,
                  known_jobs[job.job][3] if job.job in known_jobs else None) for job in stale)
        workers = self.settings.processes or _usable_cores()
        if len(stale) < FAN_OUT_MIN_JOBS or workers < 2:
            for job, old, sig, status, in_series, verdict in tasks:
                reader = FileReader(self.pool.scanner if self.pool else _scanner(self.catalogue, self.settings),
                                    self.pool)
                yield refresh(job, old, reader, self.catalogue, self.settings, now, sig, status, in_series,
                              verdict)
            return
        yield from _fan_out(tasks, min(workers, len(stale)), self.catalogue, self.settings, now,
                            self.pool.scanner if self.pool else None)

    def _commit(self, result: JobResult, previous, diagnosis_code: str, now: datetime,
                by_options: bool = False) -> None:
        """One job's files, diagnosis, fingerprints and change: one transaction. A job diagnosed
        again only because the operator's choices of what is diagnosed (--select, --ignore,
        --rules, --progress-pattern, ...) differ from the last sweep's makes no change of its
        own: its logs said nothing new. A failure told before is then told under the new
        choices' fingerprint too."""
        db, job = self.db, result.job
        db.execute("BEGIN IMMEDIATE")
        key = st.stored_path(job.job)
        db.execute("DELETE FROM files WHERE job = ?", (key,))
        db.executemany(
            "INSERT OR REPLACE INTO files (path, job, dev, ino, size, mtime_ns, kind, compressed, "
            "committed, edge, surveys) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(st.stored_path(r.path), st.stored_path(r.job), r.dev, r.ino, r.size, r.mtime_ns, r.kind,
              int(r.compressed), r.committed, r.edge, r.surveys) for r in result.records])
        diagnosis = result.diagnosis
        if diagnosis is None:
            db.execute("DELETE FROM jobs WHERE job = ?", (key,))
            history.forget(db, job.job)
            db.execute("COMMIT")
            return
        diagnosis = self._against_history(result)
        from logscan.render.json_record import diagnosis_record

        record = diagnosis_record(diagnosis)
        fingerprint = root_fingerprint(diagnosis)
        alerted = fingerprint is not None and self._told_as(key, fingerprint) is not None
        before = previous[3] if previous else None
        if fingerprint is not None and not alerted and previous and previous[4] is not None:
            # The failure the job was told as, known under other options or an older fingerprint.
            version = self._told_as(key, previous[4])
            alerted = version is not None and (by_options or told_before(version, previous[9],
                                                                         diagnosis))
        change = None if by_options else change_of(before, previous[4] if previous else None,
                                                   diagnosis, alerted)
        stamp = time.time()
        rules: dict[str, int] = {}
        for finding in diagnosis.findings:
            rules[finding.rule] = rules.get(finding.rule, 0) + 1
        activity = max((w.last_activity.isoformat() for w in diagnosis.workers if w.last_activity), default=None)
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
            (key, job.shown, st.stored_path(job.root), st.stored_path(job.rel), diagnosis.verdict,
             root.rule if root else None,
             fingerprint, diagnosis.summary(), len(diagnosis.workers), activity, result.status_sig,
             result.status, result.wake_at, stamp, stamp, stamp, diagnosis_code,
             json.dumps(rules, sort_keys=True), json.dumps(record, sort_keys=True)))
        if fingerprint is not None and (alerted or not by_options):
            db.execute("INSERT OR IGNORE INTO alerted (job, fingerprint, at, version) VALUES (?, ?, ?, ?)",
                       (key, fingerprint, stamp, FINGERPRINT_VERSION))
        if change is not None:
            payload = {"schema_version": PAYLOAD_SCHEMA_VERSION, "job_id": job.shown,
                       "job_path": printable(job.job), "change": change, "previous_verdict": before,
                       "swept_at": datetime.fromtimestamp(stamp, timezone.utc).isoformat(), **record}
            db.execute("INSERT INTO outbox (job, change, payload, posted) VALUES (?, ?, ?, ?)",
                       (key, change, json.dumps(payload, sort_keys=True),
                        int(change not in FAILED_CHANGES)))
        db.execute("COMMIT")

    def _told_as(self, key, fingerprint: str) -> int | None:
        """The fingerprint version a failure of this job was told under, if it was told."""
        row = self.db.execute("SELECT version FROM alerted WHERE job = ? AND fingerprint = ?",
                              (key, fingerprint)).fetchone()
        return None if row is None else row[0]

    # -- delivery ------------------------------------------------------------------------------

    def to_print(self) -> Iterator[tuple[int, dict]]:
        """(outbox seq, change) not yet printed, oldest first, read a batch at a time."""
        yield from self._outbox("printed = 0")

    def to_post(self) -> Iterator[tuple[int, dict]]:
        """(outbox seq, change) of the alerts the webhook has not acknowledged, oldest first."""
        yield from self._outbox("posted = 0")

    def _outbox(self, condition: str) -> Iterator[tuple[int, dict]]:
        last = 0
        while True:
            rows = self.db.execute(f"SELECT seq, payload FROM outbox WHERE {condition} AND seq > ? "
                                   f"ORDER BY seq LIMIT ?", (last, OUTBOX_BATCH)).fetchall()
            for seq, payload in rows:
                yield seq, json.loads(payload)
            if len(rows) < OUTBOX_BATCH:
                return
            last = rows[-1][0]

    def printed(self, seqs: list[int], posted: bool = False) -> None:
        """These changes were written out in full (and, with `posted`, need no webhook: none
        is configured)."""
        self._acknowledge(seqs, "printed = 1, posted = 1" if posted else "printed = 1")

    def posted(self, seqs: list[int], answered_by: str | None = None) -> None:
        """The webhook (the destination `answered_by`) answered 2xx for these alerts; or, with no
        destination, none is owed to one."""
        self._acknowledge(seqs, "posted = 1", answered_by)

    def webhook(self) -> dict | None:
        """What the state knows of the webhook its alerts are owed to: {"destination": hash of
        its URL, "answered": a webhook has answered 2xx for this state, "retry_at": Unix time
        before which the destination asked not to be posted to, or None}; None when no sweep of
        this state ever had a webhook."""
        value = st.get_meta(self.db, "webhook")
        try:
            known = json.loads(value) if value is not None else None
        except ValueError:
            known = None
        return known if isinstance(known, dict) else None

    def owe_to(self, destination: str) -> dict:
        """The alerts not yet posted are owed to this destination from now on: what the state
        knows of it (a wait another destination asked for is forgotten)."""
        known = self.webhook()
        if known is None or known.get("destination") != destination:
            known = {"destination": destination, "answered": bool(known and known.get("answered")),
                     "retry_at": None}
            self._set_webhook(known)
        return known

    def webhook_retry_at(self, destination: str) -> float | None:
        """When this destination asked to be posted to again, if that is still ahead and within
        the bound on waits (a time past it, or not a number, is forgotten)."""
        from logscan.sweep.alerts import RETRY_AFTER_MAX

        known = self.webhook() or {}
        when = known.get("retry_at")
        if known.get("destination") != destination or not isinstance(when, (int, float)):
            return None
        now = time.time()
        return when if now < when <= now + RETRY_AFTER_MAX else None

    def set_webhook_retry_at(self, destination: str, when: float | None) -> None:
        self._set_webhook({**self.owe_to(destination), "retry_at": when})

    def _set_webhook(self, known: dict) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        st.set_meta(self.db, "webhook", json.dumps(known, sort_keys=True))
        self.db.execute("COMMIT")

    def _acknowledge(self, seqs: list[int], done: str, answered_by: str | None = None) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        if answered_by is not None:
            known = self.webhook() or {"destination": answered_by, "retry_at": None}
            if not known.get("answered"):
                st.set_meta(self.db, "webhook", json.dumps({**known, "answered": True}, sort_keys=True))
        self.db.executemany(f"UPDATE outbox SET {done} WHERE seq = ?", [(s,) for s in seqs])
        self.db.executemany("DELETE FROM outbox WHERE seq = ? AND printed = 1 AND posted = 1",
                            [(s,) for s in seqs])
        self.db.execute("COMMIT")

    def all_jobs(self) -> Iterator[dict]:
        """Every job of the swept DIRs (and shard) as last diagnosed, by job id in natural order
        (`job-9` before `job-12`); the ids are sorted in memory, the records read a batch at a
        time."""
        roots = sorted({os.path.abspath(d) for d in self.dirs})
        marks = ",".join("?" * len(roots))
        keys = self.db.execute(f"SELECT shown, job FROM jobs WHERE root IN ({marks})",
                               [*map(st.stored_path, roots)]).fetchall()
        keys.sort(key=lambda key: (run_order(key[0]), key))  # as a series orders its runs
        for start in range(0, len(keys), OUTBOX_BATCH):
            batch = [job for _, job in keys[start:start + OUTBOX_BATCH]]
            rows = {row[7]: row for row in self.db.execute(
                f"SELECT shown, rel, record, first_seen, changed_at, diagnosed_at, root, job FROM jobs "
                f"WHERE job IN ({','.join('?' * len(batch))})", batch)}
            for job in batch:
                if job not in rows:  # gone since the ids were read
                    continue
                shown, rel, record, first_seen, changed_at, diagnosed_at, root, _ = rows[job]
                rel, root = st.loaded_path(rel), st.loaded_path(root)
                if self.shard is not None and shard_of(rel, self.shard[1]) != self.shard[0]:
                    continue
                yield {"job_id": shown, "rel": rel, "root": root, "first_seen": first_seen,
                       "changed_at": changed_at, "diagnosed_at": diagnosed_at, **json.loads(record)}

    def _against_history(self, result: JobResult):
        """The job's diagnosis with its novel lines ranked against its series' earlier healthy
        runs; a healthy run joins that history, any other leaves it."""
        diagnosis, job = result.diagnosis, result.job
        place = place_of(job.root, job.rel, self.series)
        if place is None:
            return diagnosis
        if diagnosis.novel_lines:
            from logscan.diagnose.novel_lines import with_history

            diagnosis = replace(diagnosis, novel_lines=with_history(diagnosis.novel_lines,
                                                                    history.recall(self.db, place)))
        if result.templates is not None:
            history.remember(self.db, job.job, place, result.templates)
        else:
            history.forget(self.db, job.job)
        return diagnosis


def _code_of(diagnosis_code: str) -> str:
    """The part of a job's diagnosis code that is logscan and its own rules, not the operator's
    choices (their rules, progress patterns and options)."""
    return diagnosis_code.partition(":")[0]


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
    job, old, sig, status, in_series, verdict = task
    reader = FileReader(_worker["scanner"])
    return refresh(job, old, reader, _worker["catalogue"], _worker["settings"], _worker["now"],
                   sig, status, in_series, verdict)


def _fan_out(tasks, workers, catalogue, settings, now, scanner):
    """Jobs refreshed in forked processes, which inherit the scanner, catalogue and settings
    (and the job model and rules, imported first so each child does not import them again).
    A few jobs per process are handed out ahead; results come back in order."""
    import logscan.diagnose.build  # noqa: F401  (loaded once, before the fork)
    import logscan.model.build  # noqa: F401
    from logscan.scan.pool import forked_pool

    _worker.update(scanner=scanner or _scanner(catalogue, settings), catalogue=catalogue,
                   settings=settings, now=now)
    executor = forked_pool(workers)
    if executor is None:
        for task in tasks:
            yield _refresh_task(task)
        return
    with executor:
        ahead = deque()
        for task in tasks:
            ahead.append(executor.submit(_refresh_task, task))
            if len(ahead) >= workers * FAN_OUT_AHEAD_PER_WORKER:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()
