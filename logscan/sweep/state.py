"""The sweep's state: one SQLite file on local disk, locked while a sweep uses it.

SQLite's locking and WAL need a local filesystem, so the default state lives in the user's state
directory (platformdirs), keyed by the directories swept and the shard; never inside them. Each
job is committed in its own transaction (its files, its diagnosis, its alerted fingerprints and
the changes to report, in the outbox): a sweep killed at any point leaves every job either as
the last sweep left it or as this one made it, and changes already committed are delivered by
the next sweep.

The state holds data only (text, numbers, JSON, zlib-compressed JSON): nothing in it is run or
unpickled. Paths are kept as text when they are UTF-8 and as their bytes otherwise (a directory
anyone can name holds any bytes; SQLite cannot bind the surrogates Python reads them into).
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import stat
from pathlib import Path

from logscan.errors import InputError

SCHEMA_VERSION = 6
# schema version → the statements that bring a state of that version to the next one. Version 2
# moved the reading code into packages: surveys pickled under version 1 name classes that no longer
# exist there, so their files are read again; jobs, alerts already sent and the outbox are kept.
# Version 3 names the files' surveys and the reading code's fingerprint for what they are.
# Version 4 stores surveys as JSON: the pickles of version 3 are never loaded (loading one runs
# whatever it names), so their files are read again; jobs, alerts already sent and the outbox are
# kept, the outbox learning which of its changes were printed and which were posted.
# Version 5 adds the job series' healthy history (its table is created with the schema); every
# job is diagnosed once more, from its stored surveys, so the healthy runs already swept teach
# their series. Files, alerts already sent and the outbox are kept.
# Version 6 keeps what it knows of the webhook per destination (one JSON `webhook` in meta): a
# wait kept for the whole state (and, from a 400-digit Retry-After, for ever) is forgotten; that
# a webhook answered is kept, as is that alerts are owed to one. Each fingerprint told carries
# the version of the function that made it (logscan.sweep.changes.FINGERPRINT_VERSION): those
# kept until now are version 0, and are mapped to the new ones as their jobs are diagnosed again.
MIGRATIONS = {
    1: "DELETE FROM files; DELETE FROM meta WHERE key = 'facts_code';",
    2: "ALTER TABLE files RENAME COLUMN facts TO surveys; "
       "UPDATE meta SET key = 'reading_code' WHERE key = 'facts_code';",
    3: "DELETE FROM files; DELETE FROM meta WHERE key = 'reading_code'; "
       "ALTER TABLE outbox ADD COLUMN printed INTEGER NOT NULL DEFAULT 0; "
       "ALTER TABLE outbox ADD COLUMN posted INTEGER NOT NULL DEFAULT 0;",
    4: "UPDATE jobs SET code = '';",
    5: "INSERT OR IGNORE INTO meta (key, value) SELECT 'webhook', "
       "'{\"answered\": true, \"destination\": \"\", \"retry_at\": null}' "
       "WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'webhook_answered'); "
       "INSERT OR IGNORE INTO meta (key, value) SELECT 'webhook', "
       "'{\"answered\": false, \"destination\": \"\", \"retry_at\": null}' "
       "WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'webhook_retry_at'); "
       "DELETE FROM meta WHERE key IN ('webhook_answered', 'webhook_retry_at'); "
       "ALTER TABLE alerted ADD COLUMN version INTEGER NOT NULL DEFAULT 0;",
}
SQLITE_MAGIC = b"SQLite format 3\0"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- One row per file seen under a job: its identity when last read, how far it was read
-- (a line start), and what the parser extracted (zlib-compressed JSON surveys).
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    job TEXT NOT NULL,
    dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,
    kind TEXT NOT NULL,               -- log, skip (not a log), empty
    compressed INTEGER NOT NULL DEFAULT 0,
    committed INTEGER NOT NULL DEFAULT 0,
    edge BLOB,                        -- the bytes just before `committed`: grown, not rewritten
    surveys BLOB
);
CREATE INDEX IF NOT EXISTS files_job ON files (job);
CREATE TABLE IF NOT EXISTS jobs (
    job TEXT PRIMARY KEY,             -- absolute path of the run directory
    shown TEXT NOT NULL,              -- as reported: the swept DIR as given, then the run dir
    root TEXT NOT NULL,               -- the swept DIR (absolute)
    rel TEXT NOT NULL,                -- the run directory relative to it
    verdict TEXT NOT NULL,
    root_rule TEXT,
    root_fingerprint TEXT,
    summary TEXT NOT NULL,
    workers INTEGER NOT NULL,
    last_activity TEXT,
    status_sig TEXT,                  -- identity of the job_status file when read
    status TEXT,                      -- what it said
    wake_at REAL,                     -- when time alone may change the verdict (stall-after)
    first_seen REAL NOT NULL,
    changed_at REAL NOT NULL,
    diagnosed_at REAL NOT NULL,
    code TEXT NOT NULL,               -- the diagnosis fingerprint (code, rules, settings) it was made with
    rules TEXT NOT NULL,              -- JSON {rule id: findings}
    record TEXT NOT NULL              -- the diagnosis, JSON schema v1
);
CREATE TABLE IF NOT EXISTS alerted (
    job TEXT NOT NULL, fingerprint TEXT NOT NULL, at REAL NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,   -- of the fingerprint's function (sweep.changes)
    PRIMARY KEY (job, fingerprint)
);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job TEXT NOT NULL, change TEXT NOT NULL, payload TEXT NOT NULL,
    printed INTEGER NOT NULL DEFAULT 0,   -- written to standard output
    posted INTEGER NOT NULL DEFAULT 0     -- answered 2xx by the webhook, or no alert to post
);
-- The templates of the latest healthy runs of each job series (logscan.sweep.series), at most
-- MAX_HISTORY_RUNS a series: what a failing run of the series is compared with.
CREATE TABLE IF NOT EXISTS history (
    job TEXT PRIMARY KEY,             -- the healthy run's job key
    series TEXT NOT NULL,
    run TEXT NOT NULL,                -- its id as a reason names it
    ord TEXT NOT NULL,                -- its place in the series (logscan.sweep.series.run_order)
    templates BLOB NOT NULL           -- zlib-compressed JSON list of templates
);
CREATE INDEX IF NOT EXISTS history_series ON history (series, ord);
CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL, finished REAL,
    jobs INTEGER, refreshed INTEGER, changes INTEGER, files_opened INTEGER, bytes_read INTEGER
);
"""


class Busy(Exception):
    """Another sweep holds the state's lock."""


def stored_path(path: str) -> str | bytes:
    """A path as the state keeps it: its text when that is UTF-8, else its bytes."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path)
    return path


def loaded_path(value: str | bytes) -> str:
    """A path kept by stored_path, as Python names it."""
    return value if isinstance(value, str) else os.fsdecode(value)


def default_state_path(dirs: list[str], shard: tuple[int, int] | None) -> Path:
    """<user state dir>/logscan/sweeps/<hash of the swept directories and shard>.sqlite3"""
    import platformdirs

    key = "\0".join(sorted(os.path.abspath(d) for d in dirs))
    if shard is not None:
        key += f"\0shard={shard[0]}/{shard[1]}"
    name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path(platformdirs.user_state_dir("logscan")) / "sweeps" / f"{name}.sqlite3"


def check_state_path(state: Path, dirs: list[str]) -> None:
    """The state must not live inside a swept directory (a shared, often network, filesystem)."""
    where = os.path.realpath(state)
    for d in dirs:
        root = os.path.realpath(d)
        if os.path.commonpath([where, root]) == root:
            raise InputError(f"--state {state} is inside the swept directory {d}: keep the state "
                             f"on local disk outside it (SQLite locking fails on shared filesystems)")


def real_state_path(state: Path) -> Path:
    """The file the state really is (symbolic links resolved): two sweeps reaching one state by
    two names take one lock. Refused, before anything is created beside it: a directory, a
    device, a FIFO or a socket, and a file that is not an SQLite database (it is never
    overwritten)."""
    real = Path(os.path.realpath(state))
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise InputError(f"--state {state}: {exc.strerror or exc}: give a file on local disk") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"--state {state} is a directory: give a file path (e.g. {state}/sweep.sqlite3)")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"--state {state} is not a regular file (a device, FIFO or socket): "
                         f"give a file on local disk")
    if info.st_size:
        try:
            with open(real, "rb") as handle:
                head = handle.read(len(SQLITE_MAGIC))
        except OSError as exc:
            raise InputError(f"cannot read the state {state}: {exc.strerror or exc}") from None
        if head != SQLITE_MAGIC:
            raise InputError(f"--state {state} is not a logscan state (not an SQLite database): it is "
                             f"left as it is; give another --state")
    return real


def state_error(state: Path, exc: sqlite3.Error) -> InputError:
    """What the user is told when SQLite cannot use the state file: one line naming it."""
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, sqlite3.OperationalError) and "full" in reason:
        return InputError(f"the state {state}: {reason}: free space on its disk or pass another --state")
    if isinstance(exc, sqlite3.OperationalError) and ("readonly" in reason or "unable to open" in reason
                                                       or "disk I/O" in reason):
        return InputError(f"the state {state}: {reason}: make it and its directory writable by this "
                          f"user or pass another --state")
    return InputError(f"the state {state} is damaged ({reason}): move it aside (the sweep then starts "
                      f"afresh and alerts every failure once more) or pass another --state")


class Lock:
    """An exclusive POSIX lock on the first byte of the state file itself, held for the whole
    sweep: one lock per file (device and inode), whatever name or hard link it is reached by.
    SQLite never locks that byte (its locks lie at 1 GiB and in the -shm file), and keeps its
    descriptor of the file open until the sweep closes it (closing any descriptor of a file drops
    a process's POSIX locks on it). The kernel releases the lock when this process ends, however
    it ends; processes forked from it never hold it (an flock would be shared with them, and a
    killed sweep's workers would keep every later sweep out)."""

    def __init__(self, state: Path):
        self.path = state
        self.fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        try:  # an empty file is a new state to SQLite
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise InputError(f"cannot open the state {self.path}: {exc.strerror or exc}: make it and "
                             f"its directory writable by this user or pass another --state") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InputError(f"the state {self.path} is not a regular file: pass another --state")
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        except OSError as exc:
            holder = _lock_holder(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise Busy(holder) from None
            raise InputError(f"cannot lock the state {self.path}: {exc.strerror or exc}") from None
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# struct flock as Linux lays it out: type, whence, start, len, pid (and padding).
_FLOCK = "hhqqi4x"


def _lock_holder(fd: int) -> str:
    """The pid of the process that holds the lock on the first byte, or '?'."""
    import fcntl
    import struct

    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0))
        kind, _, _, _, pid = struct.unpack(_FLOCK, answer)
    except (OSError, struct.error):
        return "?"
    return str(pid) if kind != fcntl.F_UNLCK and pid > 0 else "?"


def connect(state: Path) -> sqlite3.Connection:
    """The state, opened, created or migrated; an SQLite failure is an InputError naming it."""
    try:
        db = sqlite3.connect(state, isolation_level=None)  # transactions are explicit: BEGIN/COMMIT
    except sqlite3.Error as exc:
        raise state_error(state, exc) from None
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(SCHEMA)
        version = get_meta(db, "schema_version")
        if version is None:
            set_meta(db, "schema_version", str(SCHEMA_VERSION))
        elif version.isdigit() and int(version) in MIGRATIONS:
            _migrate(db, int(version))
        elif version != str(SCHEMA_VERSION):
            raise InputError(f"{state}: state written by a newer logscan (schema {version}, this "
                             f"one reads up to {SCHEMA_VERSION}): upgrade logscan or pass another --state")
    except sqlite3.Error as exc:
        db.close()
        raise state_error(state, exc) from None
    except BaseException:
        db.close()
        raise
    return db


def _migrate(db: sqlite3.Connection, version: int) -> None:
    db.execute("BEGIN IMMEDIATE")
    while version in MIGRATIONS:
        for statement in filter(str.strip, MIGRATIONS[version].split(";")):
            db.execute(statement)
        version += 1
    set_meta(db, "schema_version", str(version))
    db.execute("COMMIT")


def get_meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def code_fingerprint(catalogue_sources: list[str], extra: str = "") -> tuple[str, str, str]:
    """(reading code, logscan, the operator's) fingerprints. Stored surveys are kept only while
    the reading code and every rule that chooses lines (and `extra`: the progress patterns) are
    the same; stored diagnoses only while logscan (its code and its own rules) and the
    operator's choices (their rules, `extra`, the settings) are. The last two are kept apart: a
    job diagnosed again for the operator's choices alone makes no change of its own
    (logscan.sweep.engine)."""
    from logscan.catalogue import builtin_rules_dir

    package = Path(__file__).resolve().parent.parent
    builtin = builtin_rules_dir().resolve()
    # Everything that turns bytes into a Survey: the files and scan stages, and the catalogue.
    reading_files = sorted([*(package / "files").glob("*.py"), *(package / "scan").glob("*.py"),
                            package / "catalogue.py"])
    reading, own, operators = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    for path in reading_files:
        reading.update(path.relative_to(package).as_posix().encode())
        reading.update(_read(path))
    for source in sorted(catalogue_sources):
        for digest in (reading, own if Path(source).resolve().is_relative_to(builtin) else operators):
            digest.update(source.encode("utf-8", "surrogateescape"))
            digest.update(_read(Path(source)))
    reading.update(extra.encode())
    operators.update(extra.encode())
    for path in sorted(package.rglob("*.py")):
        own.update(_read(path))
    return reading.hexdigest()[:32], own.hexdigest()[:32], operators.hexdigest()[:16]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
