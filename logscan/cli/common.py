"""What the commands share: the config options, settings from flags and config, one-line errors,
and writing to standard output or a file without a traceback."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from logscan.cli.exit_codes import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_USAGE
from logscan.vocabulary import SEVERITY_ORDER, FailOn, JobStatus, Severity, Verdict


def version() -> str:
    """The installed distribution's version, else the package's own (run from a checkout)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version("ddp-logscan")
    except PackageNotFoundError:
        from logscan import __version__

        return __version__


ConfigFile = Annotated[Optional[Path], typer.Option(
    "--config", metavar="FILE",
    help="Read settings from FILE (a logscan.toml, or a pyproject.toml's [tool.logscan]) instead "
         "of the nearest one.")]
Isolated = Annotated[bool, typer.Option(
    "--isolated", help="Read no config file: only the command line and the defaults apply.")]
RuleDirs = Annotated[list[str], typer.Option(
    "--rules", metavar="DIR", help="Extra directory of rule files (repeatable).")]


# The options of every command that diagnoses jobs (scan, check, report, sweep), declared once.
Select = Annotated[list[str], typer.Option(help="Only these rule ids (repeatable).")]
Ignore = Annotated[list[str], typer.Option(help="Skip these rule ids (repeatable).")]
ProgressPatterns = Annotated[list[str], typer.Option(
    "--progress-pattern", help="Regex marking a line that shows training progress (repeatable).")]
JobStatusOption = Annotated[Optional[JobStatus], typer.Option(
    help="What the platform reports for the job (default: a job_status file, if any).")]
Now = Annotated[Optional[str], typer.Option(help="Current time for staleness, ISO 8601.")]
StallAfter = Annotated[Optional[str], typer.Option(
    help="A log quiet for this long counts as stalled (e.g. 30m, 2h).")]
Jobs = Annotated[int, typer.Option(help="Processes for scanning large logs (0: one per core).")]
FailOnOption = Annotated[Optional[FailOn], typer.Option(
    help="Exit 1 on findings at or above this severity.")]
Output = Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to FILE.")]
Color = Annotated[Optional[bool], typer.Option("--color/--no-color", help="Colour the human report.")]



def option(name: str, annotation, default=None) -> inspect.Parameter:
    """A command parameter made from a table rather than written out: `annotation` is an
    `Annotated[type, typer.Option(...)]` as a written parameter would have."""
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                             annotation=annotation)


def with_options(after: str, options: Sequence[inspect.Parameter]):
    """The command also takes `options`, listed in its help after its parameter `after`, their
    values passed in its `**given`: typer reads a command's options from its signature, so options
    declared in a table join the signature rather than being written one parameter each."""
    def decorate(command):
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        at = next(i for i, p in enumerate(own) if p.name == after) + 1
        command.__signature__ = signature.replace(parameters=[*own[:at], *options, *own[at:]])
        return command
    return decorate


# Standard output failed (disk full, closed) and that was reported: don't flush it again.
_stdout_failed = False


def say(line: str) -> None:
    """One line on stderr, made inert (log text and file names can hold anything); never fails."""
    from logscan.render.inert import inert

    stream = sys.stderr
    if stream is None:  # started with stderr closed
        return
    try:
        stream.write(inert(line) + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def fail(message: str) -> NoReturn:
    """A usage, config or input error: one line on stderr, exit status 2."""
    say(f"logscan: error: {message}")
    raise typer.Exit(EXIT_USAGE)


def text(value: object) -> str:
    """A catalogue value as text: a user's rule file may hold a number where text belongs."""
    return value if isinstance(value, str) else str(value)


def emit(report: str) -> None:
    """Write to standard output, now. A reader that went away (BrokenPipeError) is left to
    `main`, which ends quietly; any other failure (a full disk, a closed stdout) is one line."""
    stream = sys.stdout
    if stream is None:
        fail("cannot write to standard output: it is closed (use -o FILE)")
    try:
        stream.write(report)
        stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        fail_stdout(exc)
        raise typer.Exit(EXIT_USAGE) from None


def write_report(report: str, output: Path | None) -> None:
    """The report to FILE, or to standard output."""
    if output is None:
        emit(report)
        return
    try:
        output.write_text(report, encoding="utf-8")
    except (OSError, ValueError) as exc:
        fail(f"cannot write {output}: {_reason(exc)}")


def fail_stdout(exc: Exception) -> int:
    """Say that standard output failed, once; the exit status for it."""
    global _stdout_failed
    _stdout_failed = True
    say(f"logscan: error: cannot write to standard output: {_reason(exc)}")
    return EXIT_USAGE


def flush_standard_streams(status: int) -> int:
    """Flush what is still buffered as the process ends; the exit status, made 2 if standard
    output could not take it (`logscan --help > /dev/full`)."""
    stream = sys.stdout
    if stream is not None and not _stdout_failed:
        try:
            stream.flush()
        except BrokenPipeError:
            pass
        except (OSError, ValueError) as exc:
            status = fail_stdout(exc)
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return status


def _reason(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc)


def load_settings(flags: dict, config_file: Path | None, isolated: bool):
    """The run's Settings from the flags and the config file (the nearest one, the one given
    with --config, or none with --isolated); a bad value is a one-line error."""
    from logscan.config import find_config, load_config
    from logscan.errors import ConfigError, LogscanError
    from logscan.settings import Settings

    try:
        if config_file is not None and isolated:
            raise ConfigError("--config and --isolated cannot be used together")
        if isolated:
            table, path = {}, None
        elif config_file is not None:
            table, path = load_config(config_file)
        else:
            table, path = find_config()
        return Settings.resolve(flags, table, path)
    except LogscanError as exc:
        fail(str(exc))


def checked_catalogue(settings):
    """The rule catalogue, every --select/--ignore id checked against it (ConfigError)."""
    from logscan.catalogue import check_selection, load_catalogue

    catalogue = load_catalogue(settings.rule_dirs)
    check_selection(settings.select, settings.ignore, catalogue.rules)
    return catalogue


def diagnose_or_fail(paths: list[str], settings):
    """(the Diagnosis of the job in PATHs, the catalogue it used); a problem the user can act on
    ends the command in one line."""
    from logscan.errors import LogscanError

    try:
        from logscan.diagnose.pipeline import diagnose_paths

        catalogue = checked_catalogue(settings)
        return diagnose_paths(list(paths), settings, catalogue), catalogue
    except LogscanError as exc:
        fail(str(exc))


def exit_status(diagnosis, fail_on: FailOn) -> int:
    """0 for a HEALTHY or RUNNING verdict with no finding at or above fail_on; 1 otherwise: a
    FAILED job, or INCONCLUSIVE logs, which a gate must not pass. (lint's verdict is only
    HEALTHY or FAILED.)"""
    if fail_on == FailOn.NEVER:
        return EXIT_HEALTHY
    if diagnosis.verdict in (Verdict.FAILED, Verdict.INCONCLUSIVE):
        return EXIT_FINDINGS
    worst = diagnosis.worst_severity()
    if worst is not None and SEVERITY_ORDER[worst] <= SEVERITY_ORDER[Severity(fail_on)]:
        return EXIT_FINDINGS
    return EXIT_HEALTHY


def to_terminal(settings) -> bool:
    return settings.output is None and sys.stdout is not None and sys.stdout.isatty()


def use_color(color: bool | None, settings) -> bool:
    """--color/--no-color, else colour on a terminal unless NO_COLOR is set (no-color.org)."""
    if color is not None:
        return color
    return to_terminal(settings) and not os.environ.get("NO_COLOR")
