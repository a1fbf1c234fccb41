"""`logscan report PATH... -o report.html`: the post-mortem page of one job, one self-contained
HTML file (see logscan.render.html). With no -o, a terminal gets a file, not the HTML: the page
goes to ./logscan-report-JOB.html (a free numbered name if that exists) and one line says where."""

from dataclasses import dataclass, field
from typing import Annotated, Optional

import typer

from logscan.cli.exit_codes import EXIT_STATUS_HELP
from logscan.cli.options import SETTING, JobOptions, Paths


def register(app: typer.Typer) -> None:
    from logscan.cli import LogscanCommand

    app.command("report", cls=LogscanCommand, epilog=EXIT_STATUS_HELP)(Report)


@dataclass(frozen=True, kw_only=True)
class Report(JobOptions):
    """Write a job's post-mortem as one HTML page: verdict, root cause, per-Worker timeline,
    findings and the Worker table. The exit status follows the verdict, as for scan."""

    paths: Paths = field(kw_only=False)
    output: Annotated[Optional[str], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the page to FILE (- : standard output). Default: standard output in a pipe; "
                                        "on a terminal, a new ./logscan-report-JOB.html, named on stderr.")
    ] = field(default=None, metadata={SETTING: "output"})

    def __post_init__(self) -> None:
        from logscan.cli.outputs import diagnose_command

        raise typer.Exit(diagnose_command(options=self, page=True))
