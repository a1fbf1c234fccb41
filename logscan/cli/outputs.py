"""What `scan` and `check` share about output: the formats, extra report files from the same run
(`--json-output FILE`, `--junit-output FILE`, ...), the GitHub step summary, and the one place a
Diagnosis is prepared for reports (fingerprints; the paths are already as the user gave them)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.cli.common import completes, fail, option, write_report
from logscan.render import RENDERERS
from logscan.vocabulary import Format, Role

# When the command started: a JUnit report says how long its check took.
_STARTED = time.monotonic()

FormatOption = Annotated[Optional[str], typer.Option(
    "--format", "-f", metavar="FORMAT", **completes(Format),
    help=f"Report format on standard output (or -o FILE): {', '.join(Format)}.")]


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


def expectations_asked(settings, catalogue) -> list[tuple[str, str]]:
    """(rule id, the flag and value asked, as typed: `--expect-workers 2`) of each expectation this
    run checked, in the order EXPECTATIONS declares them."""
    from logscan.expectations import Kind, asked_for

    checked = set(checked_rules(catalogue, settings))
    out = []
    for expectation in asked_for(settings.expectations):
        if expectation.rule not in checked:
            continue
        value = getattr(settings.expectations, expectation.field)
        if expectation.kind is Kind.SWITCH:
            shown = expectation.flag
        elif expectation.kind is Kind.DURATION:
            shown = f"{expectation.flag} {_duration_text(value)}"
        else:
            shown = f"{expectation.flag} {value}"
        out.append((expectation.rule, shown))
    return out


def _duration_text(value) -> str:
    seconds = int(value.total_seconds())
    parts = [(seconds // 86400, "d"), (seconds % 86400 // 3600, "h"), (seconds % 3600 // 60, "m"),
             (seconds % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n) or "0s"


def expectation_results(diagnosis, settings, catalogue) -> list[tuple[str, str, bool]]:
    """(rule id, as asked, held) of each expectation the run checked: held when it has no finding."""
    failed = {f.rule for f in diagnosis.findings}
    return [(rule_id, shown, rule_id not in failed)
            for rule_id, shown in expectations_asked(settings, catalogue)]


def expectations_markdown(results) -> str:
    """The step summary's account of the gate: each expectation asked and whether it held."""
    if not results:
        return ("\n### Expectations\n\nNone were asked for: the gate checked the verdict and "
                "`--fail-on` only.\n")
    rows = "".join(f"| `{shown}` | {'held' if held else '**not met**'} |\n"
                   for _rule, shown, held in results)
    return f"\n### Expectations\n\n| expectation | result |\n| --- | --- |\n{rows}"


def _hostname() -> str:
    import socket

    return socket.gethostname()


def _identity() -> dict:
    """What a format may show that takes imports to find out, each read only for a format that
    takes it: importlib.metadata alone costs a small job more than its JSON report."""
    from logscan.cli.common import project_url, version

    return {"tool_version": version, "information_uri": project_url, "hostname": _hostname}


def render(fmt: str, diagnosis, catalogue, settings, color: bool = False,
           human: dict | None = None, gate: bool = False) -> str:
    from datetime import datetime, timezone

    from logscan.render import reads

    if fmt == "human":
        return RENDERERS[fmt](diagnosis, color=color, **(human or {}))
    identity = {name: find() for name, find in _identity().items() if reads(fmt, name)}
    text = RENDERERS[fmt](
        diagnosis, catalogue=catalogue, checked=checked_rules(catalogue, settings),
        project_dir=os.environ.get("CI_PROJECT_DIR"), **identity,
        expectations=expectations_asked(settings, catalogue),
        started=settings.now or datetime.now(timezone.utc), elapsed=time.monotonic() - _STARTED,
        base_dir=os.getcwd())
    if fmt == "markdown" and gate:
        text += expectations_markdown(expectation_results(diagnosis, settings, catalogue))
    return text


def write_reports(diagnosis, settings, catalogue, paths: list[str], color: bool,
                  human: dict | None = None, quiet: bool = False, gate: bool = False) -> None:
    """The report on standard output (or -o FILE; none with `quiet`), every extra report file,
    and the Markdown report appended to $GITHUB_STEP_SUMMARY when the run writes GitHub
    annotations. A gate's Markdown reports say which expectations held."""
    from logscan.diagnose.fingerprint import for_report

    report = for_report(diagnosis, paths)
    if not (quiet and settings.output is None):
        write_report(render(settings.format, report, catalogue, settings,
                            color=color and settings.format == "human", human=human, gate=gate),
                     settings.output)
    for fmt, file in settings.reports:
        write_report(render(fmt, report, catalogue, settings, gate=gate), file)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and "github" in (settings.format, *(fmt for fmt, _ in settings.reports)):
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(render("markdown", report, catalogue, settings, gate=gate) + "\n")
        except OSError as exc:
            fail(f"cannot append to $GITHUB_STEP_SUMMARY ({summary}): {exc.strerror or exc}")
