"""`logscan check PATH... [expectations]`: scan, plus what the smoke run must show; a CI gate.

The job's verdict and root cause are what the logs show; the gate's result is apart from them: an
unmet expectation (a finding of its own id, evidence and hint) fails the gate, one the lines cannot
check (no times) is said and does not. With no expectations the gate still fails when the logs
show nothing to judge (verdict INCONCLUSIVE). Paths in every format are as the user gave them;
reports for CI systems can go to several files at once.
"""

from dataclasses import dataclass, field

import typer

from logscan.cli.exit_codes import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from logscan.cli.options import ExpectationOptions, JobOptions, Paths, ReportFiles, ReportOptions

CHECK_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    every expectation holds (or could not be checked: no times), the verdict is
       HEALTHY or RUNNING, and no finding reaches --fail-on (default: error)
  {EXIT_FINDINGS}    otherwise: an expectation not met, a FAILED job, logs that show nothing to
       judge (INCONCLUSIVE), or findings at or above --fail-on
  {EXIT_USAGE}    usage, config or input error (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)

\b
--format defaults to github when GitHub Actions runs the step and standard output is not a
terminal (annotations, and the Markdown report appended to $GITHUB_STEP_SUMMARY)."""


def register(app: typer.Typer) -> None:
    from logscan.cli import LogscanCommand

    app.command("check", cls=LogscanCommand, epilog=CHECK_EXIT_HELP)(Check)


@dataclass(frozen=True, kw_only=True)
class Check(JobOptions, ReportFiles, ReportOptions, ExpectationOptions):
    """Gate a CI pipeline on a smoke run's logs: scan them and hold them to expectations."""

    paths: Paths = field(kw_only=False)

    def __post_init__(self) -> None:
        from logscan.cli.outputs import diagnose_command

        raise typer.Exit(diagnose_command(options=self, gate=True))
