"""`logscan scan PATH...`: options in, one call to the pipeline, a rendered diagnosis and an exit
status out."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_STATUS_HELP
from logscan.cli.common import ConfigFile, Isolated, RuleDirs, fail, load_settings, write_report


class Format(str, Enum):
    human = "human"
    json = "json"


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
    format: Annotated[Optional[Format], typer.Option("--format", "-f", help="Report format.")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to FILE.")] = None,
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
    config: ConfigFile = None,
    isolated: Isolated = False,
) -> None:
    """Diagnose one DDP job from its launch logs."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, jobs=jobs, format=format,
        fail_on=fail_on, output=output), config, isolated)
    from logscan.errors import LogscanError

    try:
        from logscan.pipeline import diagnose_paths
        from logscan.render import RENDERERS

        catalogue = _check_rule_ids(settings)
        diagnosis = diagnose_paths(list(paths), settings, catalogue)
    except LogscanError as exc:
        fail(str(exc))
    human = settings.format == "human"
    if color is None:
        color = settings.output is None and sys.stdout is not None and sys.stdout.isatty()
    write_report(RENDERERS[settings.format](diagnosis, color=color and human), settings.output)
    raise typer.Exit(exit_status(diagnosis, settings.fail_on))


def _check_rule_ids(settings):
    from logscan.catalogue import load_catalogue
    from logscan.errors import ConfigError

    catalogue = load_catalogue(settings.rule_dirs)
    for rule_id in (*settings.select, *settings.ignore):
        if rule_id not in catalogue.rules:
            raise ConfigError(f"unknown rule id {rule_id!r} (see 'logscan rules')")
    return catalogue
