"""`logscan scan PATH...`: options in, one call to the pipeline, a rendered diagnosis and an exit
status out."""

from __future__ import annotations

import shutil
from typing import Annotated

import typer

from logscan.cli.exit_codes import EXIT_STATUS_HELP
from logscan.cli.common import (Color, ConfigFile, FailOnOption, Ignore, Isolated, Jobs,
                                JobStatusOption, Now, Paths, Output, ProgressPatterns, Quiet, RuleDirs, Select,
                                StallAfter, diagnose_or_fail, exit_status, load_settings,
                                to_terminal, use_color, with_options)
from logscan.cli.outputs import REPORT_OPTIONS, FormatOption, report_files, write_reports
from logscan.scan.progress import showing


def register(app: typer.Typer) -> None:
    app.command("scan", epilog=EXIT_STATUS_HELP)(scan)


@with_options(after="output", options=REPORT_OPTIONS)
def scan(
    paths: Paths,
    format: FormatOption = None,
    output: Output = None,
    fail_on: FailOnOption = None,
    rules: RuleDirs = [],
    select: Select = [],
    ignore: Ignore = [],
    progress_pattern: ProgressPatterns = [],
    job_status: JobStatusOption = None,
    now: Now = None,
    stall_after: StallAfter = None,
    jobs: Jobs = None,
    color: Color = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Human report: every evidence line and cascade in full.")] = False,
    timeline: Annotated[bool, typer.Option("--timeline", help="Human report: draw each Worker's stage timeline.")] = False,
    quiet: Quiet = False,
    config: ConfigFile = None,
    isolated: Isolated = False,
    **given,
) -> None:
    """Diagnose one DDP job from its launch logs."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, processes=jobs, format=format,
        fail_on=fail_on, output=output,
        reports=report_files(given)), config, isolated)
    with showing(not quiet):  # bytes read, on a terminal's stderr, once the scan takes a while
        diagnosis, catalogue = diagnose_or_fail(paths, settings)
    terminal = to_terminal(settings)
    # On a terminal the human report wraps to its width; in a pipe or a file no line is cut.
    human = dict(verbose=verbose, timeline=timeline,
                 width=shutil.get_terminal_size().columns if terminal else None)
    write_reports(diagnosis, settings, catalogue, list(paths), color=use_color(color, settings),
                  human=human, quiet=quiet)
    raise typer.Exit(exit_status(diagnosis, settings.fail_on))

