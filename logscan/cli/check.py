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
                                JobStatusOption, Now, Paths, Output, ProgressPatterns, RuleDirs, Select,
                                Quiet, StallAfter, diagnose_or_fail, exit_status, load_settings,
                                option, say, use_color, whole_number, with_options)
from logscan.cli.outputs import (REPORT_OPTIONS, FormatOption, expectation_results, report_files,
                                 under_github_actions, write_reports)
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


# What each kind of expectation is on the command line: a count is text until `whole_number`
# reads it and a duration until Settings.resolve does, so that a bad one is answered in logscan's
# words; every one unset by default, so the config file can set it.
_GIVEN_AS = {Kind.COUNT: Optional[str], Kind.LIMIT: Optional[str], Kind.SWITCH: Optional[bool],
             Kind.DURATION: Optional[str]}
_NUMBERS = (Kind.COUNT, Kind.LIMIT)
# One option per expectation, each named as Settings.resolve takes it.
EXPECTATION_OPTIONS = tuple(
    option(f"expect_{e.field}", Annotated[_GIVEN_AS[e.kind], typer.Option(
        e.flag, metavar=e.metavar, help=e.help)]) for e in EXPECTATIONS)


@with_options(after="output", options=REPORT_OPTIONS)
@with_options(after="paths", options=EXPECTATION_OPTIONS)
def check(
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
    quiet: Quiet = False,
    config: ConfigFile = None,
    isolated: Isolated = False,
    **given,
) -> None:
    """Gate a CI pipeline on a smoke run's logs: scan them and hold them to expectations."""
    expected = {f"expect_{e.field}": whole_number(e.flag, given[f"expect_{e.field}"])
                if e.kind in _NUMBERS else given[f"expect_{e.field}"] for e in EXPECTATIONS}
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, processes=jobs, format=format,
        default_format="github" if under_github_actions() else None,
        fail_on=fail_on, output=output,
        reports=report_files(given),
        **expected), config, isolated, gate=True)
    diagnosis, catalogue = diagnose_or_fail(paths, settings)
    write_reports(diagnosis, settings, catalogue, list(paths), color=use_color(color, settings),
                  quiet=quiet, gate=True)
    status = exit_status(diagnosis, settings.fail_on)
    if not quiet:
        say(verdict_line(status, diagnosis, expectation_results(diagnosis, settings, catalogue)))
    raise typer.Exit(status)


def verdict_line(status: int, diagnosis, results) -> str:
    """What the gate decided, on stderr: why it failed, or which expectations it verified."""
    if status != EXIT_HEALTHY and diagnosis.verdict == Verdict.INCONCLUSIVE:
        return f"logscan: check fails: the logs show nothing to judge: {diagnosis.verdict_reason}"
    unmet = [shown for _rule, shown, held in results if not held]
    held = [shown for _rule, shown, ok in results if ok]
    if status != EXIT_HEALTHY:
        told = f"not met: {', '.join(unmet)}" if unmet else f"verdict {diagnosis.verdict}"
        return f"logscan: check fails ({told})"
    if not held:
        return ("logscan: check passes: no expectation was asked for (the verdict and --fail-on "
                "were checked)")
    return f"logscan: check passes: {len(held)} expectation(s) held: {', '.join(held)}"
