"""`logscan check PATH... [expectations]`: scan, plus what the smoke run must show; a CI gate.

Each expectation is a finding like any other (own id, evidence, hint). With no expectations the
gate still fails when the logs show nothing to judge (verdict INCONCLUSIVE). Paths in every
format are as the user gave them; reports for CI systems can go to several files at once.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from logscan.cli.exit_codes import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from logscan.cli.common import (Color, ConfigFile, FailOnOption, Ignore, Isolated, Jobs,
                                JobStatusOption, Now, Output, ProgressPatterns, RuleDirs, Select,
                                StallAfter, diagnose_or_fail, exit_status, load_settings, option,
                                say, use_color, with_options)
from logscan.cli.outputs import (REPORT_OPTIONS, FormatOption, report_files, under_github_actions,
                                 write_reports)
from logscan.expectations import EXPECTATIONS, Kind
from logscan.vocabulary import Verdict

CHECK_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    every expectation holds, the verdict is HEALTHY or RUNNING, and no finding
       reaches --fail-on (default: error)
  {EXIT_FINDINGS}    otherwise: an expectation not met, a FAILED job, logs that show nothing to
       judge (INCONCLUSIVE), or findings at or above --fail-on
  {EXIT_USAGE}    usage, config or input error (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)

\b
--format defaults to github when GitHub Actions runs the step and standard output is not a
terminal (annotations, and the Markdown report appended to $GITHUB_STEP_SUMMARY)."""


def register(app: typer.Typer) -> None:
    app.command("check", epilog=CHECK_EXIT_HELP)(check)


# What each kind of expectation is on the command line (a duration is text such as 10m until
# Settings.resolve reads it); every one unset by default, so the config file can set it.
_GIVEN_AS = {Kind.COUNT: Optional[int], Kind.LIMIT: Optional[int], Kind.SWITCH: Optional[bool],
             Kind.DURATION: Optional[str]}
# One option per expectation, each named as Settings.resolve takes it.
EXPECTATION_OPTIONS = tuple(
    option(f"expect_{e.field}", Annotated[_GIVEN_AS[e.kind], typer.Option(
        e.flag, metavar=e.metavar, help=e.help)]) for e in EXPECTATIONS)


@with_options(after="output", options=REPORT_OPTIONS)
@with_options(after="paths", options=EXPECTATION_OPTIONS)
def check(
    paths: Annotated[list[str], typer.Argument(help="Log files or directories of ONE job.")],
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
    jobs: Jobs = 0,
    color: Color = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    **given,
) -> None:
    """Gate a CI pipeline on a smoke run's logs: scan them and hold them to expectations."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, processes=jobs, format=format,
        default_format="github" if under_github_actions() else None,
        fail_on=fail_on, output=output,
        reports=report_files(given),
        **{expectation.name: given[expectation.name] for expectation in EXPECTATION_OPTIONS}),
        config, isolated)
    diagnosis, catalogue = diagnose_or_fail(paths, settings)
    write_reports(diagnosis, settings, catalogue, list(paths), color=use_color(color, settings))
    status = exit_status(diagnosis, settings.fail_on)
    if status != EXIT_HEALTHY and diagnosis.verdict == Verdict.INCONCLUSIVE:
        say(f"logscan: check fails: the logs show nothing to judge: {diagnosis.verdict_reason}")
    raise typer.Exit(status)
