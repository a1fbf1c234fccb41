"""What `scan` and `check` share about output: the formats, extra report files from the same run
(`--json-output FILE`, `--junit-output FILE`, ...), the GitHub step summary, and the one place a
Diagnosis is prepared for reports (fingerprints; the paths are already as the user gave them)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli.common import fail, option, write_report
from logscan.render import RENDERERS
from logscan.vocabulary import Format, Role

FormatOption = Annotated[Optional[Format], typer.Option(
    "--format", "-f", help="Report format on standard output (or -o FILE).")]


def _report_parameter(fmt: Format) -> str:
    return f"{fmt.value}_output"


# `--FORMAT-output FILE` for every format a renderer is registered for (logscan.render).
REPORT_OPTIONS = tuple(option(_report_parameter(fmt), Annotated[Optional[Path], typer.Option(
    f"--{fmt.value}-output", metavar="FILE", help=f"Also write the {fmt.value} report to FILE.")])
    for fmt in RENDERERS)


def report_files(given: dict) -> list[tuple[str, Path]]:
    """(format, FILE) of every --FORMAT-output given, in the renderers' order."""
    return [(fmt.value, given[_report_parameter(fmt)]) for fmt in RENDERERS
            if given.get(_report_parameter(fmt)) is not None]


def under_github_actions() -> bool:
    """GitHub Actions runs this step and standard output is not a terminal: annotations."""
    stream = sys.stdout
    return os.environ.get("GITHUB_ACTIONS") == "true" and not (stream is not None and stream.isatty())


def checked_rules(catalogue, settings) -> list[str]:
    """The rules this run checked: those selected, and the expectations asked for."""
    from logscan.findings import CODE_RULES
    from logscan.findings.expectations import asked

    ids = [rule.id for rule in catalogue.rules.values() if rule.role != Role.EXPECTATION]
    ids += asked(catalogue, settings.expectations, CODE_RULES)
    return [rule_id for rule_id in ids if settings.selects(rule_id)]


def render(fmt: str, diagnosis, catalogue, settings, color: bool = False,
           human: dict | None = None) -> str:
    from logscan.cli.common import version

    if fmt == "human":
        return RENDERERS[fmt](diagnosis, color=color, **(human or {}))
    return RENDERERS[fmt](diagnosis, catalogue=catalogue, checked=checked_rules(catalogue, settings),
                          project_dir=os.environ.get("CI_PROJECT_DIR"), tool_version=version())


def write_reports(diagnosis, settings, catalogue, paths: list[str], color: bool,
                  human: dict | None = None) -> None:
    """The report on standard output (or -o FILE), every extra report file, and the Markdown
    report appended to $GITHUB_STEP_SUMMARY when the run writes GitHub annotations."""
    from logscan.diagnose.fingerprint import for_report

    report = for_report(diagnosis, paths)
    write_report(render(settings.format, report, catalogue, settings,
                        color=color and settings.format == "human", human=human), settings.output)
    for fmt, file in settings.reports:
        write_report(render(fmt, report, catalogue, settings), file)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and "github" in (settings.format, *(fmt for fmt, _ in settings.reports)):
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(render("markdown", report, catalogue, settings) + "\n")
        except OSError as exc:
            fail(f"cannot append to $GITHUB_STEP_SUMMARY ({summary}): {exc.strerror or exc}")
