"""The swept directories → their jobs, by names and stat alone: nothing is opened here.

Directories are walked and names judged as discovery does (checkpoints, configs and hidden files
are not logs; a link out of DIR is not followed); the files are grouped into run directories by
logscan.files.jobroots; only the jobs of this shard are stat'ed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field

from logscan.files.discovery import JOB_STATUS_FILE, Discovery, is_log_name, printable, walk_files
from logscan.files.jobroots import group_by_run


@dataclass(frozen=True)
class FileStat:
    path: str
    # As evidence shows it: the run directory's name, then the path below it. Unlike `scan`'s
    # paths (as typed, so relative to the current directory) it does not depend on where the
    # sweep runs from or how DIR was typed: diagnoses, status signatures and alert fingerprints
    # are kept in the state across sweeps run from anywhere.
    display: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    mtime: float      # st_mtime as os.stat gives it (evidence times are taken from it)

    @property
    def identity(self) -> tuple[int, int, int, int]:
        return (self.dev, self.ino, self.size, self.mtime_ns)


@dataclass
class JobDir:
    job: str                  # absolute path of the run directory: the job's key
    shown: str                # the swept DIR as given, then the run directory below it
    root: str                 # the swept DIR, absolute
    rel: str                  # the run directory relative to it ('' for DIR itself)
    name: str                 # the run directory's own name, as the job's files are shown under it
    files: list[FileStat] = field(default_factory=list)
    status_files: list[FileStat] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def shard_of(rel: str, shards: int) -> int:
    """The shard a job falls in: a stable hash of its path relative to the swept DIR, so every
    machine that mounts the DIR elsewhere agrees."""
    digest = hashlib.sha256(rel.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % shards


@dataclass
class Walk:
    """What the walk found: the jobs, and what it could not see."""

    jobs: dict[str, JobDir] = field(default_factory=dict)
    # (directory, why), as printable text: a directory that could not be listed (permissions,
    # a name beyond PATH_MAX, a system tree). The jobs at, above or below it are not judged.
    unwalkable: list[tuple[str, str]] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)   # swept DIRs (absolute) holding no file at all

    def hidden(self, job: str) -> str | None:
        """The unwalkable directory that hides part or all of `job` (its key), if any."""
        shown = printable(job)
        for directory, _ in self.unwalkable:
            if shown == directory or shown.startswith(directory.rstrip("/") + "/") \
                    or directory.startswith(shown.rstrip("/") + "/"):
                return directory
        return None


def _walk_names(root: str, walk: Walk) -> tuple[set[str], list[str], list[str]]:
    """(log-like files, job_status files, every other file), relative to root with '/'
    separators, as discovery walks a directory (logscan.files.discovery.walk_files)."""
    logs, status, files = set(), [], []
    found = Discovery()
    for entry, rel in walk_files(root, "", found, set()):
        if entry.name == JOB_STATUS_FILE:
            status.append(rel)
            continue
        files.append(rel)
        if is_log_name(entry.name):
            logs.add(rel)
    # Discovery notes a directory it cannot list by its full path; a link out of the tree is
    # noted by its name below root (relative) and is no directory of the tree.
    walk.unwalkable += [(path, why) for path, why in found.notes if path.startswith("/")]
    if not (logs or status or files) and not found.notes:
        walk.empty.append(root)
    return logs, status, files


def _stat(root: str, rel: str, display: str, job: JobDir) -> FileStat | None:
    path = os.path.join(root, rel)
    try:
        info = os.stat(path)
    except OSError as exc:
        job.notes.append((printable(display), exc.strerror or str(exc)))
        return None
    if not stat.S_ISREG(info.st_mode):
        job.notes.append((printable(display), "not a regular file (FIFO, socket or device): skipped"))
        return None
    return FileStat(path, printable(display), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                    info.st_mtime)


def find_jobs(dirs: list[str], shard: tuple[int, int] | None = None) -> Walk:
    """Every run directory under the DIRs (of one shard, if given), by job key."""
    walk = Walk()
    jobs = walk.jobs
    for given in dirs:
        root = os.path.abspath(given)
        logs, status, files = _walk_names(root, walk)
        shown_root = given.rstrip("/") or "/"
        base = os.path.basename(root) or root
        groups = group_by_run(files, status)
        status_groups = group_by_run(status, status)
        for rel, names in groups.items():
            if logs.isdisjoint(names):
                continue  # checkpoints, configs: no run here
            if shard is not None and shard_of(rel, shard[1]) != shard[0]:
                continue
            key = os.path.join(root, rel) if rel else root
            if key in jobs:
                continue  # the same run reached from two DIRs
            job = JobDir(job=key, shown=printable(f"{shown_root}/{rel}" if rel else shown_root),
                         root=root, rel=rel, name=os.path.basename(key) or base)
            prefix = f"{rel}/" if rel else ""
            for name in sorted(names):
                display = f"{job.name}/{name[len(prefix):]}"
                if name not in logs:
                    job.skipped.append(printable(display))
                    continue
                found = _stat(root, name, display, job)
                if found is not None:
                    job.files.append(found)
            for name in sorted(status_groups.get(rel, ())):
                found = _stat(root, name, f"{job.name}/{name[len(prefix):]}", job)
                if found is not None:
                    job.status_files.append(found)
            if job.files:
                jobs[key] = job
    return walk
