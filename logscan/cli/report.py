"""`logscan report PATH... -o report.html`: the post-mortem page of one job, one self-contained
HTML file (see logscan.render.html)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli import EXIT_STATUS_HELP
from logscan.cli.common import ConfigFile, Isolated, RuleDirs, fail, load_settings, write_report
from logscan.cli.scan import JobStatus, _check_rule_ids, exit_status


def register(app: typer.Typer) -> None:
    app.command("report", epilog=EXIT_STATUS_HELP)(report)


def report(
    paths: Annotated[list[str], typer.Argument(help="Log files or directories of ONE job.")],
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the page to FILE (default: standard output).")] = None,
    rules: RuleDirs = [],
    select: Annotated[list[str], typer.Option(help="Only these rule ids (repeatable).")] = [],
    ignore: Annotated[list[str], typer.Option(help="Skip these rule ids (repeatable).")] = [],
    progress_pattern: Annotated[list[str], typer.Option(
        "--progress-pattern", help="Regex marking a line that shows training progress (repeatable).")] = [],
    job_status: Annotated[Optional[JobStatus], typer.Option(
        help="What the platform reports for the job (default: a job_status file, if any).")] = None,
    now: Annotated[Optional[str], typer.Option(help="Current time for staleness, ISO 8601.")] = None,
    stall_after: Annotated[Optional[str], typer.Option(
        help="A log quiet for this long counts as stalled (e.g. 30m, 2h).")] = None,
    jobs: Annotated[int, typer.Option(help="Processes for scanning large logs (0: one per core).")] = 0,
    config: ConfigFile = None,
    isolated: Isolated = False,
) -> None:
    """Write a job's post-mortem as one HTML page: verdict, root cause, per-Worker timeline,
    findings and the Worker table. The exit status follows the verdict, as for scan."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, jobs=jobs), config, isolated)
    from logscan.errors import LogscanError

    try:
        from logscan.pipeline import diagnose_paths

        diagnosis = diagnose_paths(list(paths), settings, _check_rule_ids(settings))
    except LogscanError as exc:
        fail(str(exc))
    from logscan.render.html import render_html

    write_report(render_html(diagnosis), output)
    raise typer.Exit(exit_status(diagnosis, settings.fail_on))
