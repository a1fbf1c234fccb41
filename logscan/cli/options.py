"""The options of the commands that diagnose jobs, each declared once, as typed dataclass fields.

A command is a frozen dataclass made of these groups (`class Scan(JobOptions, ReportOptions,
ReportFiles)`): typer reads its options from the dataclass's own `__init__`, and the command runs
in `__post_init__`, handing itself to one keyword-only function. So a new option shared by
scan, check, report and sweep is one field of DiagnoseOptions (and the Settings field it sets);
a new format's `--FORMAT-output FILE` comes from the renderer registry, and an expectation's flag
from logscan.expectations.EXPECTATIONS, with no edit here.

Values with a fixed set of choices, and numbers, arrive as text and are checked by
Settings.resolve (or `whole_number`), so that a bad one is answered in logscan's words.
"""

# No `from __future__ import annotations`: typer reads these annotations from the generated
# `__init__`, which evaluates them in this module.

from dataclasses import dataclass, field, fields, make_dataclass
from pathlib import Path
from typing import Annotated, Optional

import typer

from logscan.expectations import EXPECTATIONS, Kind
from logscan.vocabulary import FailOn, Format, JobStatus, WebhookPayload

# The name of the Settings field an option sets (Settings.resolve checks it), where it has one.
SETTING = "setting"


def completes(choices) -> dict:
    """The shell completes an option given as text with its choices, as it would an enum's."""
    return {"autocompletion": lambda incomplete: [c.value for c in choices
                                                  if c.value.startswith(incomplete)]}


def _setting(name: str, default=None):
    return field(default=default, metadata={SETTING: name})


def _settings_list(name: str):
    return field(default=(), metadata={SETTING: name})


# A repeatable option shows no default: an empty list is none.
_LIST = {"show_default": False}

Paths = Annotated[list[str], typer.Argument(
    metavar="PATH...", show_default=False,
    help="Log files or directories of ONE job; - reads one log from standard input.")]
ConfigFile = Annotated[Optional[Path], typer.Option(
    "--config", metavar="FILE",
    help="Read settings from FILE (a logscan.toml, or a pyproject.toml's [tool.logscan]) instead "
         "of the nearest one.")]
Isolated = Annotated[bool, typer.Option(
    "--isolated", help="Read no config file: only the command line and the defaults apply.")]
RuleDirs = Annotated[list[str], typer.Option(
    "--rules", metavar="DIR", **_LIST, help="Extra directory of rule files (repeatable).")]
Color = Annotated[Optional[bool], typer.Option(
    "--color/--no-color", show_default=False,
    help="Colour the human report (default: on a terminal; NO_COLOR and FORCE_COLOR are honoured).")]
Quiet = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No report on standard output: only the exit status (and any -o or "
                          "--FORMAT-output file).")]


@dataclass(frozen=True, kw_only=True)
class DiagnoseOptions:
    """What every command that diagnoses jobs takes (scan, check, report, sweep)."""

    rules: RuleDirs = _settings_list("rule_dirs")
    select: Annotated[list[str], typer.Option(
        "--select", metavar="ID[,ID...]", **_LIST,
        help="Only these rule ids (repeatable, or comma-separated).")] = _settings_list("select")
    ignore: Annotated[list[str], typer.Option(
        "--ignore", metavar="ID[,ID...]", **_LIST,
        help="Skip these rule ids (repeatable, or comma-separated).")] = _settings_list("ignore")
    progress_pattern: Annotated[list[str], typer.Option(
        "--progress-pattern", metavar="REGEX", **_LIST,
        help="Regex marking a line that shows training progress (repeatable).")] = _settings_list("progress_patterns")
    now: Annotated[Optional[str], typer.Option(
        "--now", metavar="ISO-TIME",
        help="Current time for staleness, ISO 8601 (e.g. 2026-11-29T18:00:00Z).")] = _setting("now")
    stall_after: Annotated[Optional[str], typer.Option(
        "--stall-after", metavar="DURATION",
        help="A log quiet for this long counts as stalled (a live job's, hung) (e.g. 30m, 2h).")] = _setting("stall_after")
    jobs: Annotated[Optional[str], typer.Option(
        "--jobs", metavar="N", show_default=False,
        help="Processes for reading and diagnosing (default 0: one per core).")] = _setting("processes")
    config: ConfigFile = None
    isolated: Isolated = False


@dataclass(frozen=True, kw_only=True)
class AlertOptions:
    """Where the commands that alert (sweep, watch) POST each new failure, and as what."""

    webhook: Annotated[Optional[str], typer.Option(
        "--webhook", metavar="URL",
        help="POST each new failure to URL (default: $LOGSCAN_WEBHOOK_URL, else the config file's "
             "webhook-url; a URL on the command line is visible to every user of the machine).")] = _setting("webhook_url")
    webhook_payload: Annotated[Optional[str], typer.Option(
        "--webhook-payload", metavar="KIND", **completes(WebhookPayload),
        help=f"What the POST holds: {', '.join(WebhookPayload)} (default auto: Slack's or Teams' "
             "own format by the URL's host, else json).")] = _setting("webhook_payload")


@dataclass(frozen=True, kw_only=True)
class JobOptions(DiagnoseOptions):
    """What the commands that diagnose one job take (scan, check, report)."""

    job_status: Annotated[Optional[str], typer.Option(
        "--job-status", metavar="STATUS", **completes(JobStatus),
        help=f"What the platform reports for the job: {', '.join(JobStatus)} "
             "(default: a job_status file, if any).")] = _setting("job_status")


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """How scan and check report: the format, where, the gate's threshold, colour, quiet."""

    format: Annotated[Optional[str], typer.Option(
        "--format", "-f", metavar="FORMAT", **completes(Format),
        help=f"Report format on standard output (or -o FILE): {', '.join(Format)}.")] = _setting("format")
    output: Annotated[Optional[str], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the report to FILE (- : standard output).")] = _setting("output")
    fail_on: Annotated[Optional[str], typer.Option(
        "--fail-on", metavar="LEVEL", **completes(FailOn),
        help=f"Exit 1 on findings at or above this severity: {', '.join(FailOn)} "
             "(default: error).")] = _setting("fail_on")
    color: Color = None
    quiet: Quiet = False


def report_field(fmt: Format) -> str:
    return f"{fmt.value}_output"


# `--FORMAT-output FILE` for every format the renderer registry has (logscan.render).
ReportFiles = make_dataclass("ReportFiles", [
    (report_field(fmt), Annotated[Optional[Path], typer.Option(
        f"--{fmt.value}-output", metavar="FILE", help=f"Also write the {fmt.value} report to FILE.")],
     field(default=None, kw_only=True))
    for fmt in Format], frozen=True)
ReportFiles.__doc__ = "Extra reports of the same run: --FORMAT-output FILE for every format."


def report_files(options) -> list[tuple[Format, Path]]:
    """(format, FILE) of every --FORMAT-output given, in the registry's order."""
    return [(fmt, getattr(options, report_field(fmt))) for fmt in Format
            if getattr(options, report_field(fmt)) is not None]


# What each kind of expectation is on the command line: a count is text until `whole_number`
# reads it and a duration until Settings.resolve does; every one unset by default, so the
# config file can set it.
_GIVEN_AS = {Kind.COUNT: Optional[str], Kind.LIMIT: Optional[str], Kind.SWITCH: Optional[bool],
             Kind.DURATION: Optional[str]}

# `--expect-...` of every expectation logscan.expectations declares, each setting `expect_<field>`.
ExpectationOptions = make_dataclass("ExpectationOptions", [
    (f"expect_{e.field}", Annotated[_GIVEN_AS[e.kind], typer.Option(e.flag, metavar=e.metavar, help=e.help)],
     field(default=None, kw_only=True, metadata={SETTING: f"expect_{e.field}"}))
    for e in EXPECTATIONS], frozen=True)
ExpectationOptions.__doc__ = "What `logscan check` asks the logs to show."


def setting_flags(options) -> dict:
    """A command's options keyed by the Settings field each sets (Settings.resolve's flags), its
    --FORMAT-output files as `reports`."""
    flags = {f.metadata[SETTING]: getattr(options, f.name) for f in fields(options) if SETTING in f.metadata}
    if isinstance(options, ReportFiles):
        flags["reports"] = report_files(options)
    return flags
