"""One job brought up to date: each file read only as far as it is new, the job's diagnosis
rebuilt from the stored surveys plus the new bytes.

What is stored per file is its Survey (logscan.scan.scanner): the candidate lines, progress lines and
edges the parser kept, a few KiB whatever the log's size. Surveys of consecutive line-aligned
pieces merge into exactly the FileScan a whole read gives, so a grown file is surveyed from the
line start where the last sweep stopped, and the committed surveys are concatenated into one.
The bytes after the file's last newline (a line still being written) are surveyed apart and
replaced next time.

A file whose (device, inode, size, mtime) is unchanged is not opened. One that grew is checked
to still hold the bytes before where the last read stopped, then read on from there; a
truncated, rewritten or compressed-and-changed file is read again from the start; a rotated one
(`x.log` renamed `x.log.1`) is found by its inode and keeps its surveys.
"""

from __future__ import annotations

import errno
import json
import os
import zlib
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta, timezone

from logscan.files.discovery import (EMPTY_NOTE, SNIFF_BYTES, Discovery, LogFile, copy_local_rank, read_job_status,
                               settle, sniff, stream_of, why_not_a_log)
from logscan.files.reader import ReadState, open_regular
from logscan.limits import STALL_RHYTHM_FLOOR
from logscan.scan.scanner import TAIL_LINES, Survey
from logscan.sweep.tree import FileStat, JobDir
from logscan.vocabulary import JobStatus, Verdict

EDGE_BYTES = 64       # bytes before the read position kept to tell growth from a rewrite
LOG, SKIP, EMPTY = "log", "skip", "empty"


@dataclass
class FileRecord:
    """A row of the state's `files` table."""

    path: str
    job: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    kind: str
    compressed: bool = False
    committed: int = 0            # bytes read, up to a line start
    edge: bytes | None = None
    surveys: bytes | None = None  # pack((committed survey, survey of the unfinished line))

    @property
    def identity(self) -> tuple[int, int, int, int]:
        return (self.dev, self.ino, self.size, self.mtime_ns)


@dataclass
class Counters:
    files_opened: int = 0
    bytes_read: int = 0

    def add(self, other: "Counters") -> None:
        self.files_opened += other.files_opened
        self.bytes_read += other.bytes_read


@dataclass
class JobResult:
    job: JobDir
    records: list[FileRecord]
    diagnosis: object | None       # a Diagnosis; None when no file of the run is a log
    status: str | None
    status_sig: str | None
    wake_at: float | None
    counters: Counters = field(default_factory=Counters)
    # A healthy run of a job series: the templates its series' failing runs are compared with.
    templates: tuple[str, ...] | None = None
    # (path, why) of each file that could not be read (permission denied, an I/O error): the job
    # is then not diagnosed from the rest, which would tell of a Worker missing that is not.
    unreadable: tuple[tuple[str, str], ...] = ()


class UnreadableFile(Exception):
    """A file of a job that exists but cannot be read now; `why` says why."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def _unreadable(exc: OSError) -> UnreadableFile | None:
    if isinstance(exc, PermissionError) or exc.errno == errno.EIO:
        return UnreadableFile(exc.strerror or str(exc))
    return None


# A stored blob inflates to at most this: the surveys of one file are a few KiB to a few MiB.
MAX_UNPACKED = 256 << 20


class UnreadableSurveys(ValueError):
    """Stored surveys this code cannot use (another layout, damaged): the file is read again."""


def pack(surveys: tuple) -> bytes:
    """Surveys as zlib-compressed JSON: data only (bytes and tuples tagged), never code."""
    return zlib.compress(json.dumps(_data(surveys), separators=(",", ":")).encode("ascii"), 1)


def unpack(blob: bytes) -> tuple:
    try:
        inflate = zlib.decompressobj()
        text = inflate.decompress(blob, MAX_UNPACKED)
        if inflate.unconsumed_tail:
            raise UnreadableSurveys("stored surveys too big")
        found = _value(json.loads(text))
        if not isinstance(found, tuple) or not all(s is None or isinstance(s, Survey) for s in found):
            raise UnreadableSurveys("not surveys")
        return found
    except (zlib.error, ValueError, TypeError, RecursionError) as exc:
        raise UnreadableSurveys(str(exc)) from None


def _data(value):
    """`value` as JSON data: bytes, tuples, surveys and read states as one-key tagged objects."""
    if isinstance(value, (str, int, float)) or value is None:
        return value
    if isinstance(value, bytes):
        return {"b": value.decode("latin-1")}
    if isinstance(value, tuple):
        return {"t": [_data(v) for v in value]}
    if isinstance(value, list):
        return [_data(v) for v in value]
    if isinstance(value, Survey):
        return {"survey": {f.name: _data(getattr(value, f.name)) for f in fields(Survey)}}
    if isinstance(value, ReadState):
        return {"read": {f.name: _data(getattr(value, f.name)) for f in fields(ReadState)}}
    raise TypeError(f"cannot store {type(value).__name__} in the state")


def _value(data):
    """What _data stored, back: only these shapes are read, and nothing in them is run."""
    if isinstance(data, list):
        return [_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) == 1:
        (tag, inner), = data.items()
        if tag == "b" and isinstance(inner, str):
            return inner.encode("latin-1")
        if tag == "t" and isinstance(inner, list):
            return tuple(_value(v) for v in inner)
        if tag == "survey" and isinstance(inner, dict):
            return Survey(**{k: _value(v) for k, v in inner.items()})
        if tag == "read" and isinstance(inner, dict):
            return ReadState(**{k: _value(v) for k, v in inner.items()})
    raise UnreadableSurveys(f"unknown stored value {sorted(data)!r}")


_SURVEY_FIELDS = {"newlines", "ends_with_newline", "candidates", "first_progress", "last_progress",
                  "head", "tail", "tail_lines", "keywordless", "rule_timeouts", "state", "read_error",
                  "repeats", "natives", "pieces"}


def can_concat() -> bool:
    """Surveys are concatenated field by field: only while Survey has the fields known here."""
    return {f.name for f in fields(Survey)} == _SURVEY_FIELDS


def concat(a: Survey, b: Survey) -> Survey:
    """The survey of piece a followed by piece b (a ends at a line start), as one."""
    n = a.newlines
    shift = (lambda p: None if p is None else (p[0] + n, p[1]))
    out = Survey(
        newlines=n + b.newlines,
        ends_with_newline=b.ends_with_newline if b.tail is not None else a.ends_with_newline,
        candidates=a.candidates + [(n + i, raw) for i, raw in b.candidates],
        first_progress=a.first_progress if a.first_progress is not None else shift(b.first_progress),
        last_progress=shift(b.last_progress) if b.first_progress is not None else a.last_progress,
        head=a.head if a.head is not None else b.head,
        tail=b.tail if b.tail is not None else a.tail,
        tail_lines=(a.tail_lines + b.tail_lines)[-TAIL_LINES:],
        keywordless=a.keywordless + [(r, n + i, raw, g) for r, i, raw, g in b.keywordless],
        rule_timeouts=a.rule_timeouts + b.rule_timeouts,
        read_error=a.read_error or b.read_error,
        repeats=a.repeats + [(n + i, copies) for i, copies in b.repeats],
        natives=a.natives + [n + i for i in b.natives], pieces=a.pieces + b.pieces)
    out.state.size = a.state.size + b.state.size
    out.state.truncated = a.state.truncated or b.state.truncated
    out.state.compressed = a.state.compressed
    out.state.mtime = b.state.mtime if b.state.mtime is not None else a.state.mtime
    return out


class FileReader:
    """Reads files for one job, counting what it opens and reads."""

    def __init__(self, scanner, pool=None):
        self.scanner = scanner
        self.pool = pool           # a ScanPool: big first reads are split across its workers
        self.counters = Counters()

    def classify(self, path: str, size: int) -> tuple[str, bool, bytes | None]:
        """(kind, compressed, the whole file if it is small and plain) of a new or changed file,
        judged as discovery judges a file found in a directory."""
        if size == 0:
            return EMPTY, False, None
        self.counters.files_opened += 1
        self.counters.bytes_read += min(size, SNIFF_BYTES)
        text, whole, compressed = sniff(path)
        if why_not_a_log(os.path.basename(path), text, named=False) is not None:
            return SKIP, compressed, None
        return LOG, compressed, text if whole else None

    def survey(self, path: str, start: int = 0, end: int | None = None, content=None) -> Survey:
        if content is None:
            self.counters.files_opened += 1
        found = self.scanner.survey(path, start=start, end=end, content=content)
        if content is None:
            self.counters.bytes_read += found.state.size
        return found

    def whole(self, path: str, size: int) -> Survey:
        """A first read of a whole plain file: in line-aligned pieces across the pool's workers
        when it is big, as `scan` does."""
        from logscan.scan.pool import PARALLEL_MIN_BYTES
        from logscan.files.reader import line_ranges

        pool = self.pool
        if pool is None or pool.workers < 2 or size < PARALLEL_MIN_BYTES or not can_concat():
            return self.survey(path, 0, size)
        ranges = line_ranges(path, pool.workers, PARALLEL_MIN_BYTES // 2)
        ranges = [(a, size if b is None else min(b, size)) for a, b in ranges]
        futures = [pool.submit(path, a, b) for a, b in ranges]
        pieces = [f.result() for f in futures]
        self.counters.files_opened += len(pieces) + 1
        self.counters.bytes_read += sum(p.state.size for p in pieces)
        out = pieces[0]
        for piece in pieces[1:]:
            out = concat(out, piece)
        return out

    def line_end(self, path: str, start: int, size: int) -> int:
        """The offset just past the last newline in [start, size): where complete lines end."""
        self.counters.files_opened += 1
        with open_regular(path) as handle:
            fd = handle.fileno()
            pos, want = size, 1 << 12  # the last newline is usually near the end
            while pos > start:
                step = min(want, pos - start)
                chunk = os.pread(fd, step, pos - step)
                self.counters.bytes_read += len(chunk)
                cut = chunk.rfind(b"\n")
                if cut >= 0:
                    return pos - step + cut + 1
                pos, want = pos - step, min(want * 2, 1 << 20)
        return start

    def edge(self, path: str, offset: int) -> bytes:
        """The EDGE_BYTES before `offset`."""
        if offset == 0:
            return b""
        self.counters.files_opened += 1
        with open_regular(path) as handle:
            take = min(EDGE_BYTES, offset)
            data = os.pread(handle.fileno(), take, offset - take)
        self.counters.bytes_read += len(data)
        return data

    def update(self, now: FileStat, old: FileRecord | None, job: str) -> tuple[FileRecord, tuple]:
        """The file's new record and its surveys, in order (the complete lines', then the
        unfinished last line's)."""
        record = FileRecord(now.path, job, now.dev, now.ino, now.size, now.mtime_ns, SKIP)
        kept = _kept_surveys(old)
        if old is not None and kept is None:
            old = None  # surveys this code cannot use: the file is read again
        if old is not None and old.identity == now.identity:
            record.kind, record.compressed = old.kind, old.compressed
            record.committed, record.edge, record.surveys = old.committed, old.edge, old.surveys
            return record, _present(kept)
        committed, start, content = None, 0, None
        resume = (old is not None and old.kind == LOG and not old.compressed and old.surveys
                  and (old.dev, old.ino) == (now.dev, now.ino) and now.size >= old.committed
                  and can_concat())
        if resume:
            try:
                resume = self.edge(now.path, old.committed) == (old.edge or b"")
            except OSError:
                resume = False
        if resume:
            committed, start = kept[0], old.committed
            record.kind = LOG
        else:
            try:
                record.kind, record.compressed, content = self.classify(now.path, now.size)
            except OSError as exc:
                if (unreadable := _unreadable(exc)) is not None:
                    raise unreadable from None
                return record, ()
            if record.kind != LOG:
                return record, ()
            if record.compressed:  # a compressed stream cannot be resumed: read whole
                found = self.survey(now.path)
                record.committed, record.surveys = now.size, pack((found, None))
                return record, (found,)
        mtime = now.mtime
        try:
            if content is not None:  # a small plain file, whole in hand
                cut = content.rfind(b"\n") + 1
                piece = self.scanner.survey(now.path, content=(content[:cut], mtime)) if cut else None
                tail = self.scanner.survey(now.path, content=(content[cut:], mtime)) \
                    if cut < len(content) else None
                edge = content[max(0, cut - EDGE_BYTES):cut]
            else:
                cut = self.line_end(now.path, start, now.size)
                piece = None
                if cut > start:
                    piece = self.whole(now.path, cut) if start == 0 else self.survey(now.path, start, cut)
                    cut = start + piece.state.size   # what was really there to read
                tail = self.survey(now.path, cut, now.size) if now.size > cut else None
                edge = self.edge(now.path, cut)
        except OSError as exc:
            if (unreadable := _unreadable(exc)) is not None:
                raise unreadable from None
            return record, ()
        if piece is not None:
            committed = piece if committed is None else concat(committed, piece)
        record.committed, record.edge = cut, edge
        record.surveys = pack((committed, tail))
        return record, _present((committed, tail))


def _kept_surveys(old: FileRecord | None) -> tuple | None:
    """The surveys stored for a file (() for none), or None when they cannot be used."""
    if old is None or not old.surveys:
        return ()
    try:
        return unpack(old.surveys)
    except UnreadableSurveys:
        return None


def _present(surveys) -> tuple:
    return tuple(s for s in surveys if s is not None)


def status_signature(job: JobDir) -> str | None:
    """The identity of the job's job_status files: unchanged, they are not read again."""
    return ";".join(f"{f.display}:{':'.join(map(str, f.identity))}" for f in job.status_files) or None


def read_status(reader: FileReader, job: JobDir, old_sig: str | None, old_status: str | None):
    """(status, signature) of the job's job_status file, read only if it changed."""
    sig = status_signature(job)
    if sig == old_sig:
        return old_status, sig
    if not job.status_files:
        return None, None
    reader.counters.files_opened += len(job.status_files)
    found = read_job_status([f.path for f in job.status_files])
    return (found[0] if found else None), sig


@dataclass
class SurveyedJob:
    """One job's files brought up to date: what the diagnosis is made from."""

    records: list[FileRecord]
    found: Discovery          # its logs in settled order, notes and skipped files
    scans: list               # a FileScan per log of `found.logs`, in its order
    newest: float             # the newest file's mtime
    # files that could not be read (permission, I/O): (path, why); the job is not judged without them
    unreadable: tuple[tuple[str, str], ...] = ()


def survey_job(job: JobDir, old: dict[str, FileRecord], reader: FileReader) -> SurveyedJob:
    """Each of the job's files read only as far as it is new (rotated ones found by inode)."""
    by_inode = {(r.dev, r.ino): r for r in old.values()}
    present = {f.path: f for f in job.files}
    records, logs, scans, unreadable = [], [], [], []
    found = Discovery(notes=list(job.notes), skipped=list(job.skipped))
    for stat_now in job.files:
        previous = old.get(stat_now.path)
        if previous is None or (previous.dev, previous.ino) != (stat_now.dev, stat_now.ino):
            moved = by_inode.get((stat_now.dev, stat_now.ino))
            # Rotated: the inode that was another path's (now gone or a new file) lives on here.
            if moved is not None and (moved.path not in present or
                                      (present[moved.path].dev, present[moved.path].ino)
                                      != (moved.dev, moved.ino)):
                previous = moved
        try:
            record, surveys = reader.update(stat_now, previous, job.job)
        except UnreadableFile as exc:
            unreadable.append((stat_now.path, exc.why))
            continue
        records.append(record)
        if record.kind == EMPTY:
            found.notes.append((stat_now.display, EMPTY_NOTE))
        if record.kind != LOG or not surveys:
            if record.kind == SKIP:
                found.skipped.append(stat_now.display)
            continue
        stream, order = stream_of(stat_now.display)
        local_rank = copy_local_rank(stat_now.display)
        logs.append(LogFile(stat_now.path, stat_now.display, stream, order, local_rank))
        scan = reader.scanner.merge(stat_now.path, stat_now.display, list(surveys), local_rank)
        scan.mtime = stat_now.mtime
        scans.append(scan)
    scan_of = {log.path: scan for log, scan in zip(logs, scans)}
    found.logs = logs
    found.job_status_files = [f.path for f in job.status_files]
    if logs:
        settle(found)
    return SurveyedJob(records, found, [scan_of[log.path] for log in found.logs],
                       max((f.mtime for f in job.files), default=0.0), tuple(unreadable))


def refresh(job: JobDir, old: dict[str, FileRecord], reader: FileReader, catalogue, settings,
            now: datetime, old_status_sig: str | None = None, old_status: str | None = None,
            in_series: bool = False, previous_verdict: str | None = None) -> JobResult:
    """Bring one job's files up to date and diagnose it from the surveys; a run `in_series`
    that is healthy also leaves its templates (logscan.diagnose.novel_lines.run_templates)."""
    surveyed = survey_job(job, old, reader)
    records, found, scans, newest = surveyed.records, surveyed.found, surveyed.scans, surveyed.newest
    if surveyed.unreadable:
        return JobResult(job, records, None, None, None, None, reader.counters,
                         unreadable=surveyed.unreadable)
    platform, sig = read_status(reader, job, old_status_sig, old_status)
    if not scans:
        return JobResult(job, records, None, platform, sig, None, reader.counters)
    status, source = platform, (job.status_files[0].path if platform else None)
    if status is None and now.timestamp() - newest <= settings.stall_after.total_seconds():
        # No word from the platform, and a log moved lately: the job is live.
        status, source = JobStatus.RUNNING, "a log written less than --stall-after ago"
    remembered_live = status is None and previous_verdict == Verdict.RUNNING
    if remembered_live:
        # An earlier sweep saw it live and nothing since says it ended: its silence is a hang's,
        # not a copy's read long after (logscan.findings.hangs._silence_counts).
        status, source = JobStatus.RUNNING, "seen live by an earlier sweep, and nothing says it ended"
    from logscan.diagnose.pipeline import diagnose_scans  # the job model and rules: only when needed

    learnt = []

    def learn(model, diagnosis) -> None:
        if in_series and diagnosis.healthy:
            from logscan.diagnose.novel_lines import run_templates

            learnt.append(run_templates(model))

    diagnosis = diagnose_scans(job.shown, found, scans, catalogue, settings, status, source, now,
                               on_model=learn)
    if remembered_live and diagnosis.verdict == Verdict.RUNNING:
        # Taken to run, it neither failed nor hung: it ended quietly. The logs alone judge it (a
        # finished run is HEALTHY; one that just stops, INCONCLUSIVE).
        diagnosis = diagnose_scans(job.shown, found, scans, catalogue, settings, None, None, now,
                                   on_model=learn)
    return JobResult(job, records, diagnosis, platform, sig,
                     wake_at(diagnosis, newest, settings.stall_after, now, live_guess=platform is None),
                     reader.counters, learnt[0] if learnt else None)


def wake_at(diagnosis, newest: float, stall_after: timedelta, now: datetime,
            live_guess: bool) -> float | None:
    """The first moment after `now` at which time alone can change the diagnosis: a Worker's
    last activity, or the newest log's mtime when liveness is guessed, passing --stall-after."""
    moments = []
    # A job whose lines carry times stalls sooner, after a hundred of its own steps (at least
    # STALL_RHYTHM_FLOOR): look again at each multiple of the floor before --stall-after (for six
    # hours at most: a job that steps slower than that is judged at --stall-after).
    checks = [STALL_RHYTHM_FLOOR * k for k in range(1, 37) if STALL_RHYTHM_FLOOR * k < stall_after]
    checks.append(stall_after)
    for worker in diagnosis.workers:
        if worker.last_activity:
            last = worker.last_activity
            if last.tzinfo is None:
                last = last.replace(tzinfo=timezone.utc)
            moments += [(last + after).timestamp() for after in checks]
    if live_guess:
        moments.append(newest + stall_after.total_seconds())
    future = [m for m in moments if m > now.timestamp()]
    return min(future) if future else None
