"""`logscan report PATH... -o report.html`: the post-mortem page of one job, one self-contained
HTML file (see logscan.render.html)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli.exit_codes import EXIT_STATUS_HELP
from logscan.cli.common import (ConfigFile, Ignore, Isolated, Jobs, JobStatusOption, Now, Paths,
                                ProgressPatterns, RuleDirs, Select, StallAfter, diagnose_or_fail,
                                exit_status, load_settings, say, write_report)


def register(app: typer.Typer) -> None:
    app.command("report", epilog=EXIT_STATUS_HELP)(report)


def report(
    paths: Paths,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the page to FILE (default: standard output).")] = None,
    rules: RuleDirs = [],
    select: Select = [],
    ignore: Ignore = [],
    progress_pattern: ProgressPatterns = [],
    job_status: JobStatusOption = None,
    now: Now = None,
    stall_after: StallAfter = None,
    jobs: Jobs = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
) -> None:
    """Write a job's post-mortem as one HTML page: verdict, root cause, per-Worker timeline,
    findings and the Worker table. The exit status follows the verdict, as for scan."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, processes=jobs), config, isolated)
    diagnosis, _ = diagnose_or_fail(paths, settings)
    from logscan.render.html import render_html

    write_report(render_html(diagnosis), output)
    if output is not None:  # else the page itself is the output
        say(f"logscan: wrote {output}: {diagnosis.summary()}")
    raise typer.Exit(exit_status(diagnosis, settings.fail_on))
