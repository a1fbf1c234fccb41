"""`logscan scan PATH...`: options in, one call to the pipeline, a rendered diagnosis and an exit
status out."""

from dataclasses import dataclass, field
from typing import Annotated

import typer

from logscan.cli.exit_codes import EXIT_STATUS_HELP
from logscan.cli.options import JobOptions, Paths, ReportFiles, ReportOptions


def register(app: typer.Typer) -> None:
    from logscan.cli import LogscanCommand

    app.command("scan", cls=LogscanCommand, epilog=EXIT_STATUS_HELP)(Scan)


@dataclass(frozen=True, kw_only=True)
class Scan(JobOptions, ReportFiles, ReportOptions):
    """Diagnose one DDP job from its launch logs."""

    paths: Paths = field(kw_only=False)
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Human report: every evidence line and cascade in full.")] = False
    timeline: Annotated[bool, typer.Option(
        "--timeline", help="Human report: draw each Worker's stage timeline.")] = False

    def __post_init__(self) -> None:
        from logscan.cli.outputs import diagnose_command

        raise typer.Exit(diagnose_command(options=self, verbose=self.verbose, timeline=self.timeline))
