"""`logscan watch DIR`: follow one running job's logs and say what the logs tell as soon as they
tell it; exit when a failure is known (or, with --keep-going, when the job ends)."""

import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli.common import checked_catalogue, emit, fail, load_settings, say, whole_number
from logscan.cli.exit_codes import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_INTERRUPTED, EXIT_UNDELIVERED, EXIT_USAGE
from logscan.cli.options import AlertOptions, DiagnoseOptions, completes, setting_flags

WATCH_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    the job ended HEALTHY (or --for ran out with no error found)
  {EXIT_FINDINGS}    an error finding (a crash, a hang, a stall): at once, or at the end with --keep-going;
       or the job ended FAILED or INCONCLUSIVE
  {EXIT_USAGE}    usage, config or input error (one line on stderr)
  {EXIT_UNDELIVERED}   the job ended HEALTHY but an alert could not be delivered to the webhook
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)"""


class WatchFormat(StrEnum):
    """What `logscan watch` prints: events as they come."""

    HUMAN = "human"
    JSONL = "jsonl"


def register(app: typer.Typer) -> None:
    from logscan.cli import LogscanCommand

    app.command("watch", cls=LogscanCommand, epilog=WATCH_EXIT_HELP)(Watch)


@dataclass(frozen=True, kw_only=True)
class Watch(DiagnoseOptions, AlertOptions):
    """Follow a running job's logs: each failure as soon as it is known, a stall once it is one,
    and the verdict when the job ends."""

    directory: Annotated[str, typer.Argument(
        metavar="DIR", show_default=False,
        help="The running job's directory: every Worker's log below it, as they appear.")] = field(kw_only=False)
    format: Annotated[str, typer.Option(
        "--format", "-f", metavar="FORMAT", **completes(WatchFormat),
        help=f"What to print: {', '.join(WatchFormat)} (one JSON object per event).")] = WatchFormat.HUMAN.value
    keep_going: Annotated[bool, typer.Option(
        "--keep-going", help="Report each new finding once and go on until the job ends.")] = False
    pid: Annotated[Optional[str], typer.Option(
        "--pid", metavar="PID", help="The launch command's process: when it is gone, the job has ended.")] = None
    interval: Annotated[Optional[str], typer.Option(
        "--interval", metavar="SECONDS", help="How often to look at the logs (default 1).")] = None
    for_: Annotated[Optional[str], typer.Option(
        "--for", metavar="DURATION",
        help="Stop watching after DURATION (e.g. 12h), exit by what is known.")] = None

    def __post_init__(self) -> None:
        raise typer.Exit(watch(options=self))


def watch(*, options: Watch) -> int:
    """The watch the options ask for; its exit status."""
    from logscan.config import parse_duration
    from logscan.errors import LogscanError
    from logscan.render import stream
    from logscan.scan.scanner import Scanner
    from logscan.vocabulary import Severity, Verdict
    from logscan.watch.follow import POLL_INTERVAL, Follower

    if options.now is not None or options.jobs is not None:
        fail(f"--{'now' if options.now is not None else 'jobs'} is not for watch: it reads the clock, "
             "and one process follows one job")
    settings = load_settings(setting_flags(options), options.config, options.isolated)
    shape, directory, keep_going = options.format, options.directory, options.keep_going
    if shape not in tuple(WatchFormat):
        fail(f"--format {shape!r} is not one of {', '.join(WatchFormat)}")
    if not Path(directory).is_dir():
        fail(f"{directory}: no such directory (watch follows one job's directory)")
    every = POLL_INTERVAL
    if options.interval is not None:
        try:
            every = float(options.interval)
        except ValueError:
            every = -1.0
        if not 0.05 <= every <= 3600:
            fail(f"--interval {options.interval!r} must be a number of seconds from 0.05 to 3600")
    deadline = None
    if options.for_ is not None:
        try:
            deadline = time.monotonic() + parse_duration(options.for_).total_seconds()
        except LogscanError as exc:
            fail(f"--for: {exc}")
    outbox = None
    try:
        catalogue = checked_catalogue(settings)
        if settings.webhook_url is not None:
            from logscan.sweep.alerts import check_url
            from logscan.watch.alerts import Outbox

            check_url(settings.webhook_url)
            outbox = Outbox(settings.webhook_url, settings.webhook_payload)
    except LogscanError as exc:
        fail(str(exc))
    follower = Follower(directory, settings, catalogue, Scanner(catalogue, settings.progress_patterns),
                        pid=whole_number("--pid", options.pid))
    show_finding = stream.finding_json if shape == WatchFormat.JSONL else stream.finding_text
    show_end = stream.end_json if shape == WatchFormat.JSONL else stream.end_text
    say(f"logscan: watching {directory} (stall after {int(settings.stall_after.total_seconds())} s of silence)")
    failed = False
    update = None

    def ending(status: int) -> int:
        if outbox is not None:
            outbox.deliver()
            if outbox.owed:
                for problem in outbox.problems:
                    say(f"logscan: {problem}")
                return EXIT_UNDELIVERED if status == EXIT_HEALTHY else status
        return status

    job = str(Path(directory).resolve())
    try:
        while True:
            try:
                update = follower.poll()
            except LogscanError as exc:
                fail(str(exc))
            if update is not None:
                at = datetime.now(timezone.utc)
                for finding in update.new:
                    emit(show_finding(finding, update.diagnosis, at))
                    if finding.severity == Severity.ERROR:
                        failed = True
                        if outbox is not None:
                            outbox.add(finding, update.diagnosis, job)
                if outbox is not None:
                    outbox.deliver()
                if update.ended:
                    emit(show_end(update.diagnosis, update.ended_because, at))
                    healthy = update.diagnosis.verdict == Verdict.HEALTHY and not failed
                    return ending(EXIT_HEALTHY if healthy else EXIT_FINDINGS)
                if failed and not keep_going:
                    return ending(EXIT_FINDINGS)
            if deadline is not None and time.monotonic() >= deadline:
                if update is not None:
                    emit(show_end(update.diagnosis, "--for ran out", datetime.now(timezone.utc)))
                return ending(EXIT_FINDINGS if failed else EXIT_HEALTHY)
            time.sleep(every)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return EXIT_INTERRUPTED
