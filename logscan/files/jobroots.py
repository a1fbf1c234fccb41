"""Which run directory (one job) each log belongs to, and `scan`'s refusal to merge several jobs.

A run directory is one job. Under a directory, a log belongs to:

1. the nearest directory, from the log's own up to the directory given, that holds a `job_status`
   file (the platform's marker of a run);
2. else the directory holding the log, going up past per-Worker directories (`worker-0`, `node1`,
   `rank_2`, `host-3`: a word and a number) and log folders (`logs`, `log`).

torchrun's `--log-dir` copies (`<log_dir>/<run_id>_<rand>/attempt_N/L/stdout.log`) count as
files of the directory holding `<log_dir>`, so they stay with their run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from logscan.files.discovery import PROCESS_COPY, printable
from logscan.errors import InputError

WORKER_DIR = re.compile(r"(?i)^(?:worker|node|rank|host|replica|pod)[-_.=]?\d+$")
LOG_FOLDERS = frozenset({"logs", "log"})
SHOWN_JOBS = 3  # run directories named in the refusal


def _is_worker_folder(name: str) -> bool:
    return bool(WORKER_DIR.match(name)) or name.lower() in LOG_FOLDERS


def run_dir_of(relative_file: str, status_dirs: set[str]) -> str:
    """The run directory, relative to the directory walked ('' for that directory itself), of
    a file given relative to it with '/' separators. `status_dirs`: directories, relative in
    the same way, that hold a job_status file."""
    copy = PROCESS_COPY.match(relative_file)
    if copy is not None:
        # <log_dir>/<run_id>_<rand>: the run's file lives in the directory holding <log_dir>.
        home = copy["run"].rpartition("/")[0].rpartition("/")[0]
    else:
        home = relative_file.rpartition("/")[0]
    parts = home.split("/") if home else []
    for depth in range(len(parts), -1, -1):
        if "/".join(parts[:depth]) in status_dirs:
            return "/".join(parts[:depth])
    while parts and _is_worker_folder(parts[-1]):
        parts.pop()
    return "/".join(parts)


def group_by_run(relative_files: Iterable[str], status_files: Iterable[str]) -> dict[str, list[str]]:
    """{run directory: its files}, every path relative to one walked directory."""
    status_dirs = {f.rpartition("/")[0] for f in status_files}
    groups: dict[str, list[str]] = {}
    for name in relative_files:
        groups.setdefault(run_dir_of(name, status_dirs), []).append(name)
    return groups


def _relative(path: str, root: str) -> str | None:
    prefix = root.rstrip("/") + "/"
    if path.startswith(prefix) and os.sep == "/":  # discovery joins the root and the names
        return path[len(prefix):]
    rel = os.path.relpath(path, root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    return rel.replace(os.sep, "/")


def several_jobs(paths: list[str], found, scans) -> list[str]:
    """The run directories, when the directories among `paths` hold logs of several jobs: two
    run directories each with a job_status file, a node_rank claimed in two run directories,
    or run directories that disagree on the master or nnodes. [] when they hold one job.
    Files named one by one are the user's choice of one job and are never split."""
    roots = [p for p in paths if os.path.isdir(p)]
    if not roots:
        return []
    runs: dict[str, list[int]] = {}   # shown run directory → indexes into found.logs
    marked: set[str] = set()
    for root in roots:
        status = [r for r in (_relative(f, root) for f in found.job_status_files) if r is not None]
        status_dirs = {f.rpartition("/")[0] for f in status}
        for index, log in enumerate(found.logs):
            rel = _relative(log.path, root)
            if rel is None or rel == ".":
                continue
            run = run_dir_of(rel, status_dirs)
            shown = os.path.join(root, run) if run else root
            runs.setdefault(shown, []).append(index)
            if run in status_dirs:
                marked.add(shown)
    if len(runs) < 2:
        return []
    claims: dict[int, set[str]] = {}
    shapes: dict[str, set[tuple]] = {}
    for run, indexes in runs.items():
        for i in indexes:
            for launch in scans[i].launches:
                if launch.node_rank is not None:
                    claims.setdefault(launch.node_rank, set()).add(run)
                shapes.setdefault(run, set()).add((launch.master_addr, launch.master_port, launch.nnodes))
    repeated = any(len(where) > 1 for where in claims.values())
    every = list(shapes.values())
    disjoint = any(not (a & b) for i, a in enumerate(every) for b in every[i + 1:])
    if len(marked) > 1 or repeated or disjoint:
        return sorted(runs)
    return []


def refuse_merged_jobs(paths: list[str], found, scans) -> None:
    """Raise an InputError, in one line, when the paths hold several jobs."""
    runs = several_jobs(paths, found, scans)
    if not runs:
        return
    shown = ", ".join(printable(r) for r in runs[:SHOWN_JOBS])
    more = f" and {len(runs) - SHOWN_JOBS} more" if len(runs) > SHOWN_JOBS else ""
    raise InputError(f"these paths hold {len(runs)} jobs, not one ({shown}{more}): `logscan scan` "
                     f"diagnoses one job; use `logscan sweep {' '.join(paths)}` for many")


__all__ = ["group_by_run", "refuse_merged_jobs", "run_dir_of", "several_jobs"]
