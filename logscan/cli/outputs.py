"""What `scan` and `check` share about output: the formats, extra report files from the same run
(`--json-output FILE`, `--junit-output FILE`, ...), the GitHub step summary, and each format's
RenderContext (the Diagnosis itself is finished: fingerprints and all)."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from logscan.cli.common import (diagnose_or_fail, exit_status, fail, load_settings, say, to_terminal, use_color,
                                write_report)
from logscan.cli.exit_codes import EXIT_HEALTHY
from logscan.render import RENDERERS
from logscan.render.context import RenderContext
from logscan.vocabulary import Format, Role, Verdict

# When the command started: a JUnit report says how long its check took.
_STARTED = time.monotonic()


@dataclass(frozen=True)
class View:
    """How the human report is laid out: colour, the terminal's width (None: a pipe or a file),
    every evidence line (-v), the stage timeline."""

    color: bool = False
    width: int | None = None
    verbose: bool = False
    timeline: bool = False


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


def context_for(fmt: Format, catalogue, settings, view: View = View()) -> RenderContext:
    """What the renderer of `fmt` is given. logscan's version and home page, and the host's
    name, are read only for a format that shows them: importlib.metadata alone costs a small job
    more than its JSON report."""
    from datetime import datetime, timezone

    renderer = RENDERERS[fmt]
    if renderer.names_tool:
        from logscan.cli.common import project_url, version

        tool_version, information_uri = version(), project_url()
    else:
        tool_version = information_uri = ""
    if renderer.names_host:
        import socket

        hostname = socket.gethostname()
    else:
        hostname = ""
    return RenderContext(
        catalogue=catalogue, checked=tuple(checked_rules(catalogue, settings)),
        expectations=tuple(expectations_asked(settings, catalogue)),
        color=view.color and fmt == Format.HUMAN, width=view.width, verbose=view.verbose,
        timeline=view.timeline, tool_version=tool_version, information_uri=information_uri,
        hostname=hostname, started=settings.now or datetime.now(timezone.utc),
        elapsed=time.monotonic() - _STARTED, base_dir=os.getcwd(),
        project_dir=os.environ.get("CI_PROJECT_DIR"))


def rendered(fmt: Format, diagnosis, catalogue, settings, view: View = View(), gate: bool = False) -> str:
    """The report of `diagnosis` in `fmt`, as this run writes it."""
    text = RENDERERS[fmt].render(diagnosis, context_for(fmt, catalogue, settings, view))
    if fmt == Format.MARKDOWN and gate:
        text += expectations_markdown(expectation_results(diagnosis, settings, catalogue))
    return text


def write_reports(report, settings, catalogue, view: View, quiet: bool = False, gate: bool = False) -> None:
    """The report on standard output (or -o FILE; none with `quiet`), every extra report file,
    and the Markdown report appended to $GITHUB_STEP_SUMMARY when the run writes GitHub
    annotations. A gate's Markdown reports say which expectations held."""
    if not (quiet and settings.output is None):
        write_report(rendered(settings.format, report, catalogue, settings, view, gate=gate), settings.output)
    for fmt, file in settings.reports:
        write_report(rendered(fmt, report, catalogue, settings, gate=gate), file)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and Format.GITHUB in (settings.format, *(fmt for fmt, _ in settings.reports)):
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(rendered(Format.MARKDOWN, report, catalogue, settings, gate=gate) + "\n")
        except OSError as exc:
            fail(f"cannot append to $GITHUB_STEP_SUMMARY ({summary}): {exc.strerror or exc}")


def verdict_line(status: int, diagnosis, results) -> str:
    """What the gate decided, on stderr: why it failed, or which expectations it verified."""
    if status != EXIT_HEALTHY and diagnosis.verdict == Verdict.INCONCLUSIVE:
        return f"logscan: check fails: the logs show nothing to judge: {diagnosis.verdict_reason}"
    unmet = [shown for _rule, shown, held in results if not held]
    held = [shown for _rule, shown, ok in results if ok]
    if status != EXIT_HEALTHY:
        told = f"not met: {', '.join(unmet)}" if unmet else f"verdict {diagnosis.verdict}"
        return f"logscan: check fails ({told})"
    if not held:
        return ("logscan: check passes: no expectation was asked for (the verdict and --fail-on "
                "were checked)")
    return f"logscan: check passes: {len(held)} expectation(s) held: {', '.join(held)}"


def diagnose_command(*, options, gate: bool = False, page: bool = False, verbose: bool = False,
                     timeline: bool = False) -> int:
    """What scan (`verbose`, `timeline`), check (`gate`) and report (`page`) do with their
    options: settings, one diagnosis, its reports; the exit status."""
    import shutil

    from logscan.cli.options import setting_flags

    flags = setting_flags(options)
    if gate and under_github_actions():
        flags["default_format"] = Format.GITHUB
    settings = load_settings(flags, options.config, options.isolated, gate=gate)
    from logscan.cli.options import ReportOptions
    from logscan.scan.progress import showing

    quiet = isinstance(options, ReportOptions) and options.quiet  # a page has no quiet mode
    with showing(not quiet):  # bytes read, on a terminal's stderr, once the scan takes a while
        diagnosis, catalogue = diagnose_or_fail(list(options.paths), settings)
    status = exit_status(diagnosis, settings.fail_on)
    if page:
        write_report(rendered(Format.HTML, diagnosis, catalogue, settings), settings.output)
        if settings.output is not None:  # else the page itself is the output
            say(f"logscan: wrote {settings.output}: {diagnosis.summary()}")
        return status
    # On a terminal the human report wraps to its width; in a pipe or a file no line is cut.
    width = shutil.get_terminal_size().columns if to_terminal(settings) and not gate else None
    view = View(color=use_color(options.color, settings), width=width, verbose=verbose, timeline=timeline)
    write_reports(diagnosis, settings, catalogue, view, quiet=options.quiet, gate=gate)
    if gate and not options.quiet:
        say(verdict_line(status, diagnosis, expectation_results(diagnosis, settings, catalogue)))
    return status
