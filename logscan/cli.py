"""The `logscan` command. Thin: options in, one call, a rendered diagnosis and an exit status out.

Nothing heavy is imported at module level, so `logscan --help` and `logscan rules` start fast.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.errors import LogscanError

EXIT_HEALTHY = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  pretty_exceptions_enable=False,
                  help="Diagnose PyTorch DDP jobs launched with torchrun from their per-Worker logs.")
rules_app = typer.Typer(add_completion=False, rich_markup_mode=None,
                        help="List the rules, or explain one.")
app.add_typer(rules_app, name="rules")


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


def _fail(message: str) -> None:
    from logscan.render.inert import inert

    sys.stderr.write(f"logscan: error: {inert(message)}\n")
    raise typer.Exit(EXIT_USAGE)


def _exit_status(diagnosis, fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_HEALTHY
    from logscan.catalogue import SEVERITY_ORDER

    worst = diagnosis.worst_severity()
    if worst is not None and SEVERITY_ORDER[worst] <= SEVERITY_ORDER[fail_on]:
        return EXIT_FINDINGS
    return EXIT_HEALTHY


@app.command()
def scan(
    paths: Annotated[list[str], typer.Argument(help="Log files or directories of ONE job.")],
    format: Annotated[Optional[Format], typer.Option("--format", "-f", help="Report format.")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to FILE.")] = None,
    fail_on: Annotated[Optional[FailOn], typer.Option(help="Exit 1 on findings at or above this severity.")] = None,
    rules: Annotated[list[str], typer.Option("--rules", help="Extra directory of rule files (repeatable).")] = [],
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
) -> None:
    """Diagnose one DDP job from its launch logs."""
    try:
        from logscan.config import find_config, parse_duration, parse_time
        from logscan.pipeline import diagnose_paths
        from logscan.settings import Settings
        from logscan.render import RENDERERS

        config, _ = find_config()
        rule_dirs = tuple(config.get("rules", [])) + tuple(rules)
        settings = Settings(
            rule_dirs=rule_dirs,
            select=tuple(select or config.get("select", [])),
            ignore=tuple(ignore or config.get("ignore", [])),
            progress_patterns=tuple(progress_pattern or config.get("progress-patterns", [])),
            job_status=job_status.value if job_status else None,
            now=parse_time(now) if now else None,
            stall_after=parse_duration(stall_after or config.get("stall-after", "30m")),
            jobs=jobs,
        )
        _check_patterns(settings.progress_patterns)
        chosen_format = format.value if format else config.get("format", "human")
        if chosen_format not in RENDERERS:
            _fail(f"unknown format {chosen_format!r}")
        threshold = fail_on.value if fail_on else config.get("fail-on", "error")
        if threshold not in ("error", "warning", "never"):
            _fail(f"invalid fail-on {threshold!r}: use error, warning or never")
        catalogue = _check_rule_ids(settings)
        diagnosis = diagnose_paths(list(paths), settings, catalogue)
        use_color = color if color is not None else (output is None and sys.stdout.isatty())
        text = RENDERERS[chosen_format](diagnosis, color=use_color and chosen_format == "human")
        if output is not None:
            try:
                output.write_text(text, encoding="utf-8")
            except OSError as exc:
                _fail(f"cannot write {output}: {exc.strerror or exc}")
        else:
            sys.stdout.write(text)
    except LogscanError as exc:
        _fail(str(exc))
    raise typer.Exit(_exit_status(diagnosis, threshold))


def _check_patterns(patterns) -> None:
    import re

    from logscan.errors import ConfigError

    for pattern in patterns:
        try:
            re.compile(pattern.encode())
        except re.error as exc:
            raise ConfigError(f"invalid --progress-pattern {pattern!r}: {exc}") from None


def _check_rule_ids(settings) -> None:
    from logscan.catalogue import load_catalogue
    from logscan.errors import ConfigError

    catalogue = load_catalogue(settings.rule_dirs)
    for rule_id in (*settings.select, *settings.ignore):
        if rule_id not in catalogue.rules:
            raise ConfigError(f"unknown rule id {rule_id!r} (see 'logscan rules')")
    return catalogue


@rules_app.callback(invoke_without_command=True)
def rules_list(
    ctx: typer.Context,
    rules: Annotated[list[str], typer.Option("--rules", help="Extra directory of rule files.")] = [],
) -> None:
    """List every rule: id, severity, summary."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = rules
        return
    try:
        from logscan.catalogue import load_catalogue
        from logscan.render.inert import inert

        catalogue = load_catalogue(rules)
    except LogscanError as exc:
        _fail(str(exc))
    width = max(len(r) for r in catalogue.rules)
    for rule in sorted(catalogue.rules.values(), key=lambda r: r.id):
        sys.stdout.write(f"{rule.id:{width}}  {rule.severity:7}  {inert(rule.summary)}\n")


@rules_app.command("explain")
def rules_explain(ctx: typer.Context, rule_id: Annotated[str, typer.Argument(help="A rule id.")]) -> None:
    """Print one rule's documentation."""
    try:
        from logscan.catalogue import load_catalogue
        from logscan.render.inert import inert

        catalogue = load_catalogue(ctx.obj or [])
    except LogscanError as exc:
        _fail(str(exc))
    rule = catalogue.get(rule_id)
    if rule is None:
        _fail(f"unknown rule id {rule_id!r} (see 'logscan rules')")
    head = f"{rule.id} ({rule.kind}, {rule.severity if rule.kind != 'signal' else 'signal'}, stage {rule.stage})"
    sections = [head, "", inert(rule.summary), ""]
    for title, key in (("What it detects", "what"), ("Why it matters", "why"),
                       ("Example", "example"), ("How to fix", "fix")):
        sections += [f"## {title}", inert(rule.docs[key]), ""]
    if rule.hint:
        sections += ["## Hint", inert(rule.hint), ""]
    if rule.references:
        sections += ["## References", *(f"- {inert(r)}" for r in rule.references), ""]
    sys.stdout.write("\n".join(sections))


def main() -> None:
    """The console command. Once the report is written, the process ends at once: tearing down
    the job model's modules (pandas, numpy) would add about 0.1 s to every scan."""
    status = 0
    try:
        app()
    except SystemExit as exc:
        if isinstance(exc.code, int):
            status = exc.code
        elif exc.code is not None:
            sys.stderr.write(f"{exc.code}\n")
            status = 1
    except BrokenPipeError:  # the reader went away (`| head`): nothing left to tell it
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(status)
