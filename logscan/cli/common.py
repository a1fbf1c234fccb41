"""What the commands share: the config options, settings from flags and config, one-line errors,
and writing to standard output or a file without a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import typer

from logscan.cli.exit_codes import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_USAGE
from logscan.vocabulary import SEVERITY_ORDER, FailOn, Severity


# The name logscan is installed under: `logscan` on PyPI is an unrelated project.
DISTRIBUTION = "ddp-logscan"


def version() -> str:
    """The installed distribution's version, else the package's own (run from a checkout)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version(DISTRIBUTION)
    except PackageNotFoundError:
        from logscan import __version__

        return __version__


def project_url() -> str:
    """The project's home page, as the installed distribution's metadata declares it ("" if
    none): reports for CI systems link to it."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata(DISTRIBUTION).get_all("Project-URL") or []
    except PackageNotFoundError:
        return ""
    urls = dict(entry.split(", ", 1) for entry in entries if ", " in entry)
    return urls.get("Homepage", next(iter(urls.values()), ""))


def whole_number(flag: str, value: str | None) -> int | None:
    """A number given on the command line, or a one-line error in logscan's words."""
    if value is None:
        return None
    text = value.strip()
    if not text.isascii() or not text.isdigit():
        fail(f"{flag} must be a whole number, not {value!r}")
    return int(text)


def rule_ids(values: Sequence[str]) -> list[str]:
    """`--ignore a,b --ignore c` as [a, b, c]: a list flag takes commas as ruff's does."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


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


def write_report(report: str, output: Path | str | None) -> None:
    """The report to FILE, or to standard output (no -o, or `-o -`)."""
    from logscan.settings import STANDARD_OUTPUT

    if output is None or output == STANDARD_OUTPUT:
        emit(report)
        return
    from logscan.errors import LogscanError
    from logscan.output_files import write_through

    try:
        write_through(output, report)
    except LogscanError as exc:
        fail(str(exc))
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


def load_settings(flags: dict, config_file: Path | None, isolated: bool, gate: bool = False):
    """The run's Settings from the flags and the config file (the nearest one, the one given
    with --config, or none with --isolated); a bad value is a one-line error. Only the gate
    (`check`) reads the config file's expectations."""
    from logscan.config import find_config, load_config
    from logscan.errors import ConfigError, LogscanError
    from logscan.settings import Settings

    flags = dict(flags)
    for name in ("select", "ignore"):
        if name in flags:
            flags[name] = rule_ids(flags[name])
    if isinstance(flags.get("processes"), str):
        flags["processes"] = whole_number("--jobs", flags["processes"])
    from logscan.expectations import EXPECTATIONS, Kind

    for e in EXPECTATIONS:  # a count asked of `check` is text until here
        if e.kind in (Kind.COUNT, Kind.LIMIT) and isinstance(flags.get(f"expect_{e.field}"), str):
            flags[f"expect_{e.field}"] = whole_number(e.flag, flags[f"expect_{e.field}"])
    try:
        if config_file is not None and isolated:
            raise ConfigError("--config and --isolated cannot be used together")
        if isolated:
            table, path = {}, None
        elif config_file is not None:
            table, path = load_config(config_file)
        else:
            table, path = find_config()
        return Settings.resolve(flags, table, path, gate=gate)
    except LogscanError as exc:
        fail(str(exc))


def checked_catalogue(settings):
    """The rule catalogue, every --select/--ignore id checked against it (ConfigError)."""
    from logscan.catalogue import check_selection, load_catalogue

    catalogue = load_catalogue(settings.rule_dirs)
    check_selection(settings.select, settings.ignore, catalogue.rules)
    return catalogue


STDIN_PATH = "-"
STDIN_LABEL = "<stdin>"  # how a log read from standard input is named in every report


def diagnose_or_fail(paths: list[str], settings):
    """(the Diagnosis of the job in PATHs, the catalogue it used); a problem the user can act on
    ends the command in one line. A PATH inside another PATH is part of the same job, and `-`
    is one log read from standard input, named <stdin> in the reports."""
    from logscan.errors import LogscanError

    paths = outermost(paths)
    try:
        from logscan.diagnose.pipeline import diagnose_paths

        catalogue = checked_catalogue(settings)
        if STDIN_PATH not in paths:
            return diagnose_paths(paths, settings, catalogue), catalogue
        import tempfile

        with tempfile.TemporaryDirectory(prefix="logscan-stdin-") as spool:
            spooled = _spool_stdin(Path(spool) / "stdin")
            given = [spooled if p == STDIN_PATH else p for p in paths]
            try:
                diagnosis = diagnose_paths(given, settings, catalogue)
            except LogscanError as exc:
                fail(renamed(str(exc), spooled, STDIN_LABEL))
            return renamed(diagnosis, spooled, STDIN_LABEL), catalogue
    except LogscanError as exc:
        fail(str(exc))


def outermost(paths: Sequence[str]) -> list[str]:
    """The PATHs less any that lie inside (or are) another one given: `D D/worker-1` is D."""
    def where(path: str) -> str:
        return path if path == STDIN_PATH else os.path.realpath(path)

    resolved = [where(p) for p in paths]
    kept, seen = [], set()
    for path, real in zip(paths, resolved):
        if real in seen:
            continue
        inside = any(other != real and other != STDIN_PATH and os.path.isdir(other)
                     and real.startswith(other.rstrip("/") + "/") for other in resolved)
        if not inside:
            kept.append(path)
            seen.add(real)
    return kept


def _spool_stdin(target: Path) -> str:
    """Standard input copied to `target`: the scanner reads regular files only (it seeks and
    reads large logs in parallel pieces)."""
    import shutil

    stream = sys.stdin
    if stream is None:
        fail("- reads a log from standard input, but standard input is closed")
    if stream.isatty():
        fail("- reads a log from standard input, but it is a terminal: pipe a log into it "
             "(kubectl logs POD | logscan scan -)")
    source = getattr(stream, "buffer", stream)
    try:
        with open(target, "wb") as spool:
            shutil.copyfileobj(source, spool)
    except (OSError, ValueError) as exc:
        fail(f"cannot read standard input: {_reason(exc)}")
    return str(target)


def renamed(value, old: str, new: str):
    """`value` (a Diagnosis, or anything inside one) with the text `old` shown as `new`
    wherever a path or a message holds it."""
    import dataclasses

    if isinstance(value, str):
        return value.replace(old, new) if old in value else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: renamed(getattr(value, f.name), old, new)
                   for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, (list, tuple)):
        items = [renamed(item, old, new) for item in value]
        return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
    if isinstance(value, dict):
        return {renamed(k, old, new): renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return type(value)(renamed(item, old, new) for item in value)
    return value


def exit_status(diagnosis, fail_on: FailOn) -> int:
    """0 for a HEALTHY or RUNNING verdict with no finding at or above fail_on; 1 otherwise: a
    FAILED job, or INCONCLUSIVE logs, which a gate must not pass. (lint's verdict is only
    HEALTHY or FAILED.)"""
    if fail_on == FailOn.NEVER:
        return EXIT_HEALTHY
    if diagnosis.fails or diagnosis.unmet:  # an unmet expectation fails a gate whatever the job did
        return EXIT_FINDINGS
    worst = diagnosis.worst_severity()
    if worst is not None and SEVERITY_ORDER[worst] <= SEVERITY_ORDER[Severity(fail_on)]:
        return EXIT_FINDINGS
    return EXIT_HEALTHY


def to_terminal(settings) -> bool:
    from logscan.settings import STANDARD_OUTPUT

    return settings.output in (None, STANDARD_OUTPUT) and sys.stdout is not None and sys.stdout.isatty()


def use_color(color: bool | None, settings) -> bool:
    """--color/--no-color; else none when NO_COLOR is set (no-color.org), colour when
    FORCE_COLOR is (force-color.org: any value but the empty one), else colour on a terminal."""
    if color is not None:
        return color
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return to_terminal(settings)
