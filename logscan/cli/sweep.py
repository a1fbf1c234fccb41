"""`logscan sweep DIR...`: every job under shared output directories, each change told once.

Options in, one Sweep (logscan.sweep.engine) under its lock, then the outbox delivered: printed,
POSTed to the webhook, and acknowledged; metrics, export and the fleet view from the state.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli.exit_codes import EXIT_HEALTHY, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from logscan.cli.common import (ConfigFile, Ignore, Isolated, Now, ProgressPatterns, RuleDirs, Select,
                                checked_catalogue, emit, fail, load_settings, say)

EXIT_BUSY = 75  # EX_TEMPFAIL: another sweep holds this state's lock; try again later
PROGRESS_MIN_JOBS = 20  # a progress bar only for a sweep with this many jobs to diagnose

SWEEP_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    the sweep ran (whatever it found: changes are in the report)
  {EXIT_USAGE}    usage, config or input error (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)
  {EXIT_BUSY}   another sweep holds this state's lock: nothing was done
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""


class SweepFormat(StrEnum):
    """What `logscan sweep --format` prints: not a report's Format, a listing of jobs."""

    HUMAN = "human"
    JSON = "json"
    JSONL = "jsonl"


def register(app: typer.Typer) -> None:
    app.command("sweep", epilog=SWEEP_EXIT_HELP)(sweep)


def parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    k, _, n = value.partition("/")
    if not (k.isdigit() and n.isdigit()) or not 0 <= int(k) < int(n):
        fail(f"--shard {value!r} must be K/N with 0 <= K < N (e.g. 0/4 for the first of four)")
    return int(k), int(n)


def sweep(
    dirs: Annotated[list[str], typer.Argument(help="Shared output directories: every run directory below is one job.")],
    state: Annotated[Optional[Path], typer.Option(
        "--state", metavar="PATH",
        help="SQLite state file, on local disk (default: in the user's state directory, one per set of DIRs and shard).")] = None,
    format: Annotated[SweepFormat, typer.Option(
        "--format", "-f", help="Report format.")] = SweepFormat.HUMAN,
    all_jobs: Annotated[bool, typer.Option("--all", help="Print every job, not only those that changed.")] = False,
    summary: Annotated[bool, typer.Option("--summary", help="Print the fleet view (by verdict, root cause, rule, day, directory) instead of the changes.")] = False,
    export: Annotated[Optional[Path], typer.Option(
        "--export", metavar="FILE", help="Write every job to FILE.csv, FILE.jsonl or FILE.parquet (the documented schema).")] = None,
    prometheus: Annotated[Optional[Path], typer.Option(
        "--prometheus", metavar="FILE", help="Write metrics for node_exporter's textfile collector (atomically).")] = None,
    webhook: Annotated[Optional[str], typer.Option(
        "--webhook", metavar="URL", help="POST each new failure as JSON with a Slack-compatible 'text' field.")] = None,
    shard: Annotated[Optional[str], typer.Option(
        "--shard", metavar="K/N", help="Sweep only the jobs whose stable hash falls in shard K of N (0-based).")] = None,
    stall_after: Annotated[Optional[str], typer.Option(
        help="A live job quiet for this long is hung (e.g. 30m, 2h).")] = None,
    now: Now = None,
    rules: RuleDirs = [],
    select: Select = [],
    ignore: Ignore = [],
    progress_pattern: ProgressPatterns = [],
    jobs: Annotated[int, typer.Option(help="Processes for reading and diagnosing (0: one per core).")] = 0,
    progress: Annotated[Optional[bool], typer.Option(
        "--progress/--no-progress", help="Progress bar on stderr (default: when stderr is a terminal and the sweep is large).")] = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
) -> None:
    """Sweep shared output directories: find every job, read only what is new, report each change once."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        now=now, stall_after=stall_after, processes=jobs), config, isolated)
    shard_k_n = parse_shard(shard)
    from logscan.errors import LogscanError

    try:
        raise typer.Exit(_run(dirs, state, settings, format.value, all_jobs, summary, export,
                              prometheus, webhook, shard_k_n, progress))
    except LogscanError as exc:
        fail(str(exc))


def _run(dirs, state, settings, format, all_jobs, summary, export, prometheus, webhook, shard,
         progress) -> int:
    import os

    from logscan.errors import InputError
    from logscan.sweep import state as st
    from logscan.sweep.engine import Sweep

    for d in dirs:
        if not os.path.isdir(d):
            raise InputError(f"not a directory: {d}")
    if export is not None:
        from logscan.sweep.fleet import EXPORT_SUFFIXES

        if export.suffix.lower() not in EXPORT_SUFFIXES:
            raise InputError(f"--export {export}: the name must end in {', '.join(EXPORT_SUFFIXES)}")
        if export.suffix.lower() == ".parquet":
            from importlib.util import find_spec

            if find_spec("pyarrow") is None:  # said before the sweep, not after its report
                raise InputError("--export FILE.parquet needs pyarrow: pip install "
                                 "'ddp-logscan[parquet]' (or export .csv / .jsonl)")
    catalogue = checked_catalogue(settings)
    state_path = state or st.default_state_path(dirs, shard)
    st.check_state_path(state_path, dirs)
    shard_label = f"{shard[0]}/{shard[1]}" if shard else None
    from logscan.scan.pool import ScanPool

    try:
        with ScanPool(catalogue, settings) as pool, \
                Sweep(dirs, state_path, settings, catalogue, shard, pool) as run:
            bar = _ProgressBar(progress)
            try:
                report = run.run(on_start=bar.start, on_job=bar.advance)
            finally:
                bar.stop()
            every_job = run.all_jobs() if (all_jobs or summary or export or prometheus) else None
            stats = _stats(report, state_path)
            _deliver(run, report, stats, format, every_job if all_jobs else None, summary,
                     every_job, shard_label, webhook)
            if prometheus is not None:
                from logscan.sweep.metrics import render, write_atomically

                _write(prometheus, lambda: write_atomically(prometheus, render(every_job, stats, shard_label)))
            if export is not None:
                from logscan.sweep.fleet import export_rows, write_export

                _write(export, lambda: write_export(export, export_rows(every_job, shard_label)))
    except st.Busy as busy:
        say(f"logscan: another sweep (pid {busy}) holds {state_path}.lock: this one does nothing")
        return EXIT_BUSY
    return EXIT_HEALTHY


def _write(path: Path, write) -> None:
    from logscan.errors import LogscanError

    try:
        write()
    except LogscanError:
        raise
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")


def _stats(report, state_path: Path) -> dict:
    import time

    return {"jobs": report.jobs, "refreshed": report.refreshed, "removed": report.removed,
            "changes": len(report.pending), "files_opened": report.counters.files_opened,
            "bytes_read": report.counters.bytes_read, "duration_seconds": report.duration,
            "started": report.started, "finished": time.time(), "state": str(state_path)}


def _deliver(run, report, stats, format, every_job, summary, all_rows, shard_label, webhook) -> None:
    """Print the changes (or every job, or the fleet view), POST the failures, then mark them
    delivered: a change is told by exactly one sweep."""
    from logscan.sweep import listing

    changes = report.changes
    if summary:
        from logscan.sweep.fleet import export_rows, render_summary, summarize

        view = summarize(export_rows(all_rows, shard_label))
        if format == SweepFormat.HUMAN:
            text = render_summary(view)
        else:
            import json

            text = json.dumps({"schema_version": 1, "sweep": stats, "summary": view},
                              indent=2, sort_keys=True) + "\n"
    else:
        rows = listing.rows_to_print(changes, every_job)
        if format == SweepFormat.JSONL:
            text = listing.render_jsonl(rows)
        elif format == SweepFormat.JSON:
            text = listing.render_json(rows, stats)
        elif sys.stdout is not None and sys.stdout.isatty():
            import shutil

            text = listing.render_table(rows, stats, color=True, width=shutil.get_terminal_size().columns)
        else:
            text = listing.render_lines(rows)
    if text:
        emit(text)
    if webhook and changes:
        from logscan.sweep.alerts import send

        for problem in send(webhook, changes):
            say(f"logscan: {problem}")
    run.acknowledge([seq for seq, _ in report.pending])


class _ProgressBar:
    """A rich progress bar on stderr, for a terminal and a large sweep only."""

    def __init__(self, wanted: bool | None):
        self.wanted = wanted
        self.progress = None
        self.task = None

    def start(self, total: int) -> None:
        stderr = sys.stderr
        wanted = self.wanted
        if wanted is None:
            wanted = stderr is not None and stderr.isatty() and total >= PROGRESS_MIN_JOBS
        if not wanted or total == 0:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self.progress = Progress("diagnosing", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True,
                                 auto_refresh=False)  # no thread: jobs may be forked meanwhile
        self.progress.start()
        self.task = self.progress.add_task("jobs", total=total)

    def advance(self) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)
            self.progress.refresh()

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
