"""`logscan sweep DIR...`: every job under shared output directories, each change told once.

Options in, one Sweep (logscan.sweep.engine) under its lock, then the outbox delivered: printed,
then POSTed to the webhook, each change acknowledged as it is delivered (a document, `--all` or
the terminal's table, once it is written whole); metrics, export and the fleet view from the
state.
"""

import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli.exit_codes import (EXIT_BUSY, EXIT_HEALTHY, EXIT_INTERNAL, EXIT_INTERRUPTED,
                                    EXIT_UNDELIVERED, EXIT_USAGE)
from logscan.cli.common import checked_catalogue, fail, load_settings, say
from logscan.cli.options import AlertOptions, DiagnoseOptions, completes, setting_flags
from logscan.scan.progress import showing
from logscan.sweep.series import DEFAULT_SERIES_MODE, SeriesMode

PROGRESS_MIN_JOBS = 20  # a progress bar only for a sweep with this many jobs to diagnose
# A Kubernetes indexed Job gives each pod its index in this variable; `--shard auto/N` reads it
# (a manifest's args are passed as written: `$JOB_COMPLETION_INDEX/N` there reaches logscan as is).
SHARD_INDEX_VARIABLE = "JOB_COMPLETION_INDEX"
SHARD_FROM_ENVIRONMENT = "auto"

SWEEP_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    the sweep ran and delivered every change (whatever it found)
  {EXIT_USAGE}    usage, config, input or state-file error (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)
  {EXIT_UNDELIVERED}   changes not all delivered (webhook, standard output): kept for the next sweep
  {EXIT_BUSY}   another sweep holds this state's lock: nothing was done
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""


class SweepFormat(StrEnum):
    """What `logscan sweep --format` prints: not a report's Format, a listing of jobs."""

    HUMAN = "human"
    JSON = "json"
    JSONL = "jsonl"


def register(app: typer.Typer) -> None:
    from logscan.cli import LogscanCommand

    app.command("sweep", cls=LogscanCommand, epilog=SWEEP_EXIT_HELP)(Sweep)


def parse_shard(value: str | None, environ=None) -> tuple[int, int] | None:
    """K/N, or auto/N with K from JOB_COMPLETION_INDEX; else a one-line error."""
    if value is None:
        return None
    import os

    k, slash, n = value.strip().partition("/")
    if not slash or not (n.isascii() and n.isdigit()) or int(n) == 0:
        fail(f"--shard {value!r} must be K/N or {SHARD_FROM_ENVIRONMENT}/N with N >= 1 (e.g. 0/4 "
             f"for the first of four; {SHARD_FROM_ENVIRONMENT}/4 takes K from "
             f"${SHARD_INDEX_VARIABLE})")
    if k == SHARD_FROM_ENVIRONMENT:
        given = (os.environ if environ is None else environ).get(SHARD_INDEX_VARIABLE)
        if given is None:
            fail(f"--shard {value!r}: ${SHARD_INDEX_VARIABLE} is not set (a Kubernetes indexed "
                 f"Job sets it in each pod; elsewhere give K/N)")
        k = given.strip()
        if not (k.isascii() and k.isdigit()) or not int(k) < int(n):
            fail(f"--shard {value!r}: ${SHARD_INDEX_VARIABLE} is {given!r}, not a shard index "
                 f"from 0 to {int(n) - 1} (N must be the Job's completions)")
    elif not (k.isascii() and k.isdigit()) or not int(k) < int(n):
        fail(f"--shard {value!r} must be K/N with 0 <= K < N (e.g. 0/4 for the first of four)")
    return int(k), int(n)


@dataclass(frozen=True, kw_only=True)
class Sweep(DiagnoseOptions, AlertOptions):
    """Sweep shared output directories: find every job, read only what is new, report each change once."""

    dirs: Annotated[list[str], typer.Argument(
        metavar="DIR...", help="Shared output directories: every run directory below is one job.")] = field(kw_only=False)
    state: Annotated[Optional[Path], typer.Option(
        "--state", metavar="PATH",
        help="SQLite state file, on local disk (default: in the user's state directory, one per set of DIRs and shard).")] = None
    format: Annotated[str, typer.Option(
        "--format", "-f", metavar="FORMAT", **completes(SweepFormat),
        help=f"What to print: {', '.join(SweepFormat)}.")] = SweepFormat.HUMAN.value
    all_jobs: Annotated[bool, typer.Option("--all", help="Print every job, not only those that changed.")] = False
    summary: Annotated[bool, typer.Option("--summary", help="Print the fleet view instead of the changes: jobs by verdict, failed jobs by root cause, "
             "jobs by rule (a job counted once per rule it has findings of), by day and by directory.")] = False
    export: Annotated[Optional[Path], typer.Option(
        "--export", metavar="FILE", help="Write every job to FILE.csv, FILE.jsonl or FILE.parquet (the documented schema).")] = None
    prometheus: Annotated[Optional[Path], typer.Option(
        "--prometheus", metavar="FILE", help="Write metrics for node_exporter's textfile collector (atomically).")] = None
    shard: Annotated[Optional[str], typer.Option(
        "--shard", metavar="K/N", help="Sweep only the jobs whose stable hash falls in shard K of N "
        f"(0-based); {SHARD_FROM_ENVIRONMENT}/N takes K from ${SHARD_INDEX_VARIABLE} (a Kubernetes indexed Job).")] = None
    series: Annotated[str, typer.Option(
        "--series", metavar="HOW", **completes(SeriesMode),
        help="Which runs are the same job run again, whose healthy runs a failed run's novel lines are compared with: "
        "parent (the run directories under one parent directory), name (one name but its last number), none.")
    ] = DEFAULT_SERIES_MODE.value
    progress: Annotated[Optional[bool], typer.Option(
        "--progress/--no-progress", show_default=False,
        help="Progress bar on stderr (default: when stderr is a terminal and the sweep is large).")] = None

    def __post_init__(self) -> None:
        raise typer.Exit(sweep(options=self))


def sweep(*, options: Sweep) -> int:
    """The sweep the options ask for; its exit status."""
    settings = load_settings(setting_flags(options), options.config, options.isolated)
    shard_k_n = parse_shard(options.shard)
    if options.format not in tuple(SweepFormat):
        fail(f"--format {options.format!r} must be one of {', '.join(SweepFormat)}")
    if options.series not in tuple(SeriesMode):
        fail(f"--series must be one of {', '.join(SeriesMode)}, not {options.series!r}")
    from logscan.errors import LogscanError

    try:
        if settings.webhook_url is not None:
            from logscan.sweep.alerts import check_url

            check_url(settings.webhook_url)
        return _run(options.dirs, options.state, settings, SweepFormat(options.format), options.all_jobs,
                    options.summary, options.export, options.prometheus, settings.webhook_url, shard_k_n,
                    options.progress, SeriesMode(options.series))
    except LogscanError as exc:
        fail(str(exc))


def _run(dirs, state, settings, format, all_jobs, summary, export, prometheus, webhook, shard,
         progress, series) -> int:
    import os
    import time

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
    from logscan.output_files import check_replaceable

    for path in (prometheus, export):  # said before the sweep, not after its report
        if path is not None:
            check_replaceable(path)
    catalogue = checked_catalogue(settings)
    state_path = state or st.default_state_path(dirs, shard)
    st.check_state_path(state_path, dirs)
    shard_label = f"{shard[0]}/{shard[1]}" if shard else None
    import sqlite3

    from logscan.scan.pool import ScanPool

    status = EXIT_HEALTHY
    try:
        with ScanPool(catalogue, settings) as pool, \
                Sweep(dirs, state_path, settings, catalogue, shard, pool, series) as run:
            bar = _ProgressBar(progress)
            # bytes read, while a long sweep has no bar of jobs on the terminal
            with showing(progress is not False, yields_to=lambda: bar.progress is not None):
                try:
                    report = run.run(on_start=bar.start, on_job=bar.advance)
                finally:
                    bar.stop()
            _say_unseen(report)
            stats = _stats(report, state_path)
            finished = time.time()  # the metrics' own convention is Unix time
            problems = _deliver(run, report, stats, format, all_jobs, summary, shard_label, webhook)
            for problem in problems:
                say(f"logscan: {problem}")
            if problems:
                status = EXIT_UNDELIVERED
            if prometheus is not None:
                from logscan.sweep.metrics import write_metrics

                _write(prometheus, lambda: write_metrics(prometheus, run.all_jobs(), report,
                                                         finished, shard_label))
            if export is not None:
                from logscan.sweep.fleet import export_rows, write_export

                _write(export, lambda: write_export(export, export_rows(run.all_jobs(), shard_label)))
    except st.Busy as busy:
        say(f"logscan: error: another sweep (pid {busy}) holds the state {state_path}: this one did "
            f"nothing; if that sweep hangs, stop it")
        return EXIT_BUSY
    except sqlite3.Error as exc:
        if isinstance(exc, (sqlite3.ProgrammingError, sqlite3.InterfaceError)):
            raise  # logscan's own SQL: a bug
        raise st.state_error(state_path, exc) from None
    return status


def _say_unseen(report) -> None:
    """What the walk could not see: its jobs are kept as they were, never re-alerted."""
    from logscan.render.inert import inert

    for directory, why in report.unwalkable:
        say(f"logscan: cannot walk {inert(directory)} ({why}): the jobs at, above or inside it keep "
            f"their last diagnosis")
    for path, why in report.unreadable:
        say(f"logscan: cannot read {inert(path)} ({why}): its job keeps its last diagnosis (a new "
            f"one waits) until the file can be read")
    for root, jobs in report.empty:
        say(f"logscan: {inert(root)} is empty but held {jobs} job(s) at the last sweep (a filesystem not "
            f"mounted?): they are kept as they were")

def _write(path: Path, write) -> None:
    from logscan.errors import LogscanError

    try:
        write()
    except LogscanError:
        raise
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")


def _stats(report, state_path: Path) -> dict:
    """This sweep's figures as its outputs give them (times ISO 8601, UTC)."""
    import time

    from logscan.sweep.listing import iso_time

    return {"jobs": report.jobs, "refreshed": report.refreshed, "removed": report.removed,
            "changes": report.changes, "files_opened": report.counters.files_opened,
            "bytes_read": report.counters.bytes_read, "duration_seconds": report.duration,
            "started": iso_time(report.started), "finished": iso_time(time.time()),
            "state": str(state_path)}


def _deliver(run, report, stats, format, all_jobs, summary, shard_label, webhook) -> list[str]:
    """Print the changes (or every job, or the fleet view), then POST the alerts; each change is
    marked as it is delivered, so it is told by exactly one sweep and a sweep that stops halfway
    repeats at most the one in flight. Returns the problems to say (standard output failing
    ends the printing, not the posting; what was not written is printed by the next sweep)."""
    from logscan.sweep import listing

    printed: list[int] = []
    needs_post = webhook is not None
    try:
        if summary:
            from logscan.sweep.fleet import export_rows, render_summary, summarize

            view = summarize(export_rows(run.all_jobs(), shard_label))
            if format == SweepFormat.HUMAN:
                text = render_summary(view)
            else:
                import json

                text = json.dumps({"schema_version": listing.SCHEMA_VERSION, "sweep": stats,
                                   "summary": view},
                                  indent=2, sort_keys=True) + "\n"
            _write_out(text)  # counts, not the changes: a listing prints them
        elif format == SweepFormat.JSON or all_jobs or _terminal():
            # One listing: its changes are delivered once it is written whole.
            if all_jobs:
                latest: dict[str, str] = {}
                for seq, change in run.to_print():
                    printed.append(seq)
                    latest[change["job_id"]] = change["change"]
                rows = ({**job, "change": latest.get(job["job_id"])} for job in run.all_jobs())
            else:
                rows = _noting(run.to_print(), printed)
            if format == SweepFormat.JSON:
                for piece in listing.json_pieces(rows, stats):
                    _write_out(piece)
            elif format == SweepFormat.JSONL:
                for row in rows:
                    _write_out(listing.render_jsonl([row]))
            elif _terminal():
                import shutil

                _write_out(listing.render_table(list(rows), stats, color=True,
                                               width=shutil.get_terminal_size().columns))
            else:
                for row in rows:
                    _write_out(listing.render_lines([row]))
        else:
            render = listing.render_jsonl if format == SweepFormat.JSONL else listing.render_lines
            for seq, change in run.to_print():
                _write_out(render([change]))
                run.printed([seq], posted=not needs_post)
    except OSError as exc:
        kept = sum(1 for _ in run.to_print())
        problems = [f"error: cannot write to standard output ({exc.strerror or exc}): {kept} "
                    f"change(s) not printed whole are kept and printed by the next sweep"]
    else:
        problems = []
        if printed:
            run.printed(printed, posted=not needs_post)
    if not needs_post:
        if run.webhook() is None:  # no sweep of this state ever had a webhook: no alert is owed
            run.posted([seq for seq, _ in run.to_post()])
        return problems
    return problems + _post(run, webhook)


def _post(run, webhook: str) -> list[str]:
    """The alerts not yet acknowledged, POSTed (one digest while the webhook never answered),
    unless the server asked to be left alone until later."""
    import time
    from datetime import datetime, timezone

    from logscan.sweep.alerts import destination, is_alert, send

    where = destination(webhook)
    known = run.owe_to(where)
    alerts = ((seq, change) for seq, change in run.to_post() if is_alert(change))
    wait = run.webhook_retry_at(where)
    if wait is not None and wait > time.time():
        kept = sum(1 for _ in alerts)
        if not kept:
            return []
        until = datetime.fromtimestamp(wait, timezone.utc).isoformat(timespec="seconds")
        return [f"webhook: the server asked not to be posted to before {until} (Retry-After): "
                f"{kept} alert(s) kept in the state and sent by a sweep after that"]
    outcome = send(webhook, alerts, delivered=lambda seqs: run.posted(seqs, answered_by=where),
                   as_digest=not known["answered"], payload=run.settings.webhook_payload)
    run.set_webhook_retry_at(where, outcome.retry_at)
    return outcome.problems


def _noting(changes, seqs: list[int]):
    """The changes, each one's outbox seq noted as it is handed on."""
    for seq, change in changes:
        seqs.append(seq)
        yield change


def _terminal() -> bool:
    return sys.stdout is not None and sys.stdout.isatty()


def _write_out(text: str) -> None:
    """Write to standard output, all of it or an OSError: past Python's buffers, straight to the
    file descriptor, a short write continued until every byte is taken (a text stream over an
    unbuffered one, as with PYTHONUNBUFFERED=1, drops the rest of a short write unseen)."""
    import os

    stream = sys.stdout
    if stream is None:
        raise OSError(9, "standard output is closed")
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        fd = None  # not a file (captured output): the stream's own write
    if fd is None:
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    data = memoryview(text.encode(getattr(stream, "encoding", None) or "utf-8", "backslashreplace"))
    while data:
        data = data[os.write(fd, data):]


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
