"""`logscan scan PATH...`: options in, one call to the pipeline, a rendered diagnosis and an exit
status out."""

from __future__ import annotations

import os
import shutil
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_STATUS_HELP
from logscan.cli.common import ConfigFile, Isolated, RuleDirs, fail, load_settings
from logscan.reports import (ConciseOutput, FormatOption, GithubOutput, GitlabOutput,
                                HumanOutput, JsonOutput, JunitOutput, MarkdownOutput, SarifOutput,
                                report_files, write_reports)


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    never = "never"


class JobStatus(str, Enum):
    succeeded = "succeeded"
    failed = "failed"
    running = "running"


def register(app: typer.Typer) -> None:
    app.command("scan", epilog=EXIT_STATUS_HELP)(scan)


def exit_status(diagnosis, fail_on: str) -> int:
    """0 for a HEALTHY or RUNNING verdict with no finding at or above fail_on; 1 otherwise: a
    FAILED job, or INCONCLUSIVE logs, which a gate must not pass."""
    if fail_on == "never":
        return EXIT_HEALTHY
    from logscan.catalogue import SEVERITY_ORDER

    if diagnosis.verdict in ("FAILED", "INCONCLUSIVE"):
        return EXIT_FINDINGS
    worst = diagnosis.worst_severity()
    if worst is not None and SEVERITY_ORDER[worst] <= SEVERITY_ORDER[fail_on]:
        return EXIT_FINDINGS
    return EXIT_HEALTHY


def scan(
    paths: Annotated[list[str], typer.Argument(help="Log files or directories of ONE job.")],
    format: FormatOption = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to FILE.")] = None,
    human_output: HumanOutput = None,
    json_output: JsonOutput = None,
    concise_output: ConciseOutput = None,
    github_output: GithubOutput = None,
    gitlab_output: GitlabOutput = None,
    junit_output: JunitOutput = None,
    sarif_output: SarifOutput = None,
    markdown_output: MarkdownOutput = None,
    fail_on: Annotated[Optional[FailOn], typer.Option(help="Exit 1 on findings at or above this severity.")] = None,
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
    color: Annotated[Optional[bool], typer.Option("--color/--no-color", help="Colour the human report.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Human report: every evidence line and cascade in full.")] = False,
    timeline: Annotated[bool, typer.Option("--timeline", help="Human report: draw each Worker's stage timeline.")] = False,
    config: ConfigFile = None,
    isolated: Isolated = False,
) -> None:
    """Diagnose one DDP job from its launch logs."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, jobs=jobs, format=format,
        fail_on=fail_on, output=output,
        reports=report_files(human=human_output, json=json_output, concise=concise_output,
                             github=github_output, gitlab=gitlab_output, junit=junit_output,
                             sarif=sarif_output, markdown=markdown_output)), config, isolated)
    from logscan.errors import LogscanError

    try:
        from logscan.pipeline import diagnose_paths

        catalogue = _check_rule_ids(settings)
        diagnosis = diagnose_paths(list(paths), settings, catalogue)
    except LogscanError as exc:
        fail(str(exc))
    terminal = settings.output is None and sys.stdout is not None and sys.stdout.isatty()
    if color is None:
        color = terminal and not os.environ.get("NO_COLOR")  # https://no-color.org
    # On a terminal the human report wraps to its width; in a pipe or a file no line is cut.
    human = dict(verbose=verbose, timeline=timeline,
                 width=shutil.get_terminal_size().columns if terminal else None)
    write_reports(diagnosis, settings, catalogue, list(paths), color=color, human=human)
    raise typer.Exit(exit_status(diagnosis, settings.fail_on))


def _check_rule_ids(settings):
    from logscan.catalogue import load_catalogue
    from logscan.errors import ConfigError

    catalogue = load_catalogue(settings.rule_dirs)
    for rule_id in (*settings.select, *settings.ignore):
        if rule_id not in catalogue.rules:
            raise ConfigError(f"unknown rule id {rule_id!r} (see 'logscan rules')")
    return catalogue
