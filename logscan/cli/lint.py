"""`logscan lint [SCRIPT...] [--command TEXT] [--train-script FILE]`: pre-flight rules on the
launch script, the platform launch command and the training script, read and never run. Same
formats and exit statuses as `scan`: 0 clean, 1 findings at or above --fail-on, 2 usage/input."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli.exit_codes import LINT_EXIT_HELP
from logscan.cli.common import exit_status, fail, load_settings, rule_ids, use_color, write_report
from logscan.cli.options import Color, ConfigFile, Isolated, Quiet, RuleDirs


def register(app: typer.Typer) -> None:
    from logscan.cli import LogscanCommand

    app.command("lint", cls=LogscanCommand, epilog=LINT_EXIT_HELP)(lint)


def lint(
    scripts: Annotated[Optional[list[str]], typer.Argument(
        metavar="SCRIPT...", help="Launch scripts (launch_ddp.sh) to lint.", show_default=False)] = None,
    command: Annotated[Optional[str], typer.Option(
        "--command", "-c", metavar="TEXT", help="The platform launch command, as typed on the creation page.")] = None,
    command_file: Annotated[Optional[Path], typer.Option(
        "--command-file", metavar="FILE", help="Read the platform launch command from FILE.")] = None,
    train_script: Annotated[list[str], typer.Option(
        "--train-script", metavar="FILE", help="Training script to check (repeatable).")] = [],
    format: Annotated[Optional[str], typer.Option(
        "--format", "-f", metavar="FORMAT", help="Report format (as for scan: human, json, ...).")] = None,
    output: Annotated[Optional[str], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the report to FILE (- : standard output).")] = None,
    fail_on: Annotated[Optional[str], typer.Option(
        metavar="LEVEL", help="Exit 1 on findings at or above this severity: error, warning or never.")] = None,
    rules: RuleDirs = [],
    select: Annotated[list[str], typer.Option(
        metavar="ID[,ID...]", help="Only these lint rule ids (repeatable, or comma-separated).")] = [],
    ignore: Annotated[list[str], typer.Option(
        metavar="ID[,ID...]", help="Skip these lint rule ids (repeatable, or comma-separated).")] = [],
    color: Color = None,
    quiet: Quiet = False,
    config: ConfigFile = None,
    isolated: Isolated = False,
) -> None:
    """Check a launch script, launch command and training script before the job runs."""
    # select/ignore of a config file name scan's rules; lint takes them from its own flags only.
    settings = load_settings(dict(rule_dirs=rules, format=format, fail_on=fail_on, output=output),
                             config, isolated)
    from logscan.catalogue import load_catalogue
    from logscan.errors import LogscanError
    from logscan.lint import lint as run_lint
    from logscan.lint import COMMAND_LABEL, read_input, read_script
    from logscan.render import RenderContext, render

    if command is not None and command_file is not None:
        fail("--command and --command-file cannot be used together")
    try:
        if command_file is not None:
            command = read_script(str(command_file))
        label = str(command_file) if command_file is not None else COMMAND_LABEL
        inp = read_input(scripts or [], command, train_script, label)
        diagnosis = run_lint(inp, load_catalogue(settings.rule_dirs), rule_ids(select),
                             rule_ids(ignore))
    except LogscanError as exc:
        fail(str(exc))
    if not (quiet and settings.output is None):
        from logscan.cli.common import project_url, version

        human = settings.format == "human"
        context = RenderContext(color=use_color(color, settings) and human) if human else RenderContext(
            tool_version=version(), information_uri=project_url(), base_dir=os.getcwd())
        write_report(render(settings.format, diagnosis, context), settings.output)
    raise typer.Exit(exit_status(diagnosis, settings.fail_on))
