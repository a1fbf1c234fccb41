"""What `scan` and `check` share about output: the formats, extra report files from the same run
(`--json-output FILE`, `--junit-output FILE`, ...), the GitHub step summary, and each format's
RenderContext (the Diagnosis itself is finished: fingerprints and all)."""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from logscan.cli.common import (diagnose_or_fail, exit_status, fail, load_settings, say, to_terminal, use_color,
                                write_report)
from logscan.cli.exit_codes import EXIT_HEALTHY
from logscan.render import RENDERERS
from logscan.render.context import RenderContext
from logscan.settings import STANDARD_OUTPUT
from logscan.vocabulary import ExpectationStatus, Format, Role, Verdict

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


def expectations_markdown(d) -> str:
    """The step summary's account of the gate: each expectation asked and what it found."""
    if not d.expectations:
        return ("\n### Expectations\n\nNone were asked for: the gate checked the verdict and "
                "`--fail-on` only.\n")
    from logscan.render.markdown import md_inline

    shown = {ExpectationStatus.HELD: "held", ExpectationStatus.NOT_MET: "**not met**",
             ExpectationStatus.NOT_CHECKED: "not checked"}
    rows = "".join(f"| `{e.asked}` | {shown[e.status]} | {md_inline(e.why)} |\n" for e in d.expectations)
    return f"\n### Expectations\n\n| expectation | result | why |\n| --- | --- | --- |\n{rows}"


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
        color=view.color and fmt == Format.HUMAN, width=view.width, verbose=view.verbose,
        timeline=view.timeline, tool_version=tool_version, information_uri=information_uri,
        hostname=hostname, started=settings.now or datetime.now(timezone.utc),
        elapsed=time.monotonic() - _STARTED, base_dir=os.getcwd(),
        project_dir=os.environ.get("CI_PROJECT_DIR"))


def rendered(fmt: Format, diagnosis, catalogue, settings, view: View = View(), gate: bool = False) -> str:
    """The report of `diagnosis` in `fmt`, as this run writes it."""
    text = RENDERERS[fmt].render(diagnosis, context_for(fmt, catalogue, settings, view))
    if fmt == Format.MARKDOWN and gate:
        text += expectations_markdown(diagnosis)
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


def verdict_line(status: int, diagnosis) -> str:
    """What the gate decided, on stderr: why it failed, or which expectations it verified; and
    which it could not check, with why."""
    if status != EXIT_HEALTHY and diagnosis.verdict == Verdict.INCONCLUSIVE and not diagnosis.unmet:
        return f"logscan: check fails: the logs show nothing to judge: {diagnosis.verdict_reason}"
    by = {result: [e for e in diagnosis.expectations if e.status == result] for result in ExpectationStatus}
    unchecked = "".join(f"; not checked: {e.asked} ({e.why})" for e in by[ExpectationStatus.NOT_CHECKED])
    if status != EXIT_HEALTHY:
        unmet = by[ExpectationStatus.NOT_MET]
        told = [f"not met: {', '.join(e.asked for e in unmet)}"] if unmet else []
        if diagnosis.fails or not unmet:
            told.append(f"verdict {diagnosis.verdict}")
        return f"logscan: check fails ({'; '.join(told)}){unchecked}"
    held = by[ExpectationStatus.HELD]
    if not held:
        return ("logscan: check passes: no expectation was "
                + ("checked" if unchecked else "asked for")
                + f" (the verdict and --fail-on were checked){unchecked}")
    return (f"logscan: check passes: {len(held)} expectation(s) held: {', '.join(e.asked for e in held)}"
            f"{unchecked}")


# What may stand in a page's file name of the job's name; anything else becomes `_`.
_NOT_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9._+-]+")


def page_file(job: str, page_text: str) -> str:
    """Write the page to ./logscan-report-JOB.html, or the next free numbered name beside it
    (nothing is replaced); what was written, and which file was kept, as the user reads it."""
    from logscan.errors import LogscanError
    from logscan.output_files import write_new

    wanted = Path(f"logscan-report-{_NOT_IN_FILE_NAME.sub('_', job).strip('._') or 'job'}.html")
    try:
        written = write_new(wanted, page_text)
    except LogscanError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {wanted}: {exc.strerror or exc} (give -o FILE)")
    return str(written) if written == wanted else f"{written} ({wanted} exists, kept)"


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
        page_text = rendered(Format.HTML, diagnosis, catalogue, settings)
        if settings.output is None and to_terminal(settings):  # not 17 KB of HTML on a terminal
            say(f"logscan: wrote {page_file(diagnosis.job, page_text)}: {diagnosis.summary()}")
            return status
        write_report(page_text, settings.output)
        if settings.output not in (None, STANDARD_OUTPUT):  # else the page itself is the output
            say(f"logscan: wrote {settings.output}: {diagnosis.summary()}")
        return status
    # On a terminal the human report wraps to its width; in a pipe or a file no line is cut.
    width = shutil.get_terminal_size().columns if to_terminal(settings) and not gate else None
    view = View(color=use_color(options.color, settings), width=width, verbose=verbose, timeline=timeline)
    write_reports(diagnosis, settings, catalogue, view, quiet=options.quiet, gate=gate)
    if gate and not options.quiet:
        say(verdict_line(status, diagnosis))
    return status
