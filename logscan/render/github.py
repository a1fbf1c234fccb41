"""GitHub Actions workflow commands: one annotation per finding, root cause first.

The root cause, and any error that stands alone, is an `::error`; an error that is only a
consequence of another (a cascade, or caused by it) is a `::notice` titled as one, so one failure
with its consequences shows as one error on the pull request, not one per rank it took down. An
unmet expectation of a gate is an error titled as the gate's (`logscan check: not met:
--expect-workers 4`); one the lines cannot check, a warning saying why.

GitHub shows at most 10 errors, 10 warnings and 10 notices per step, so the most telling come
first and the rest are counted in one notice (the step summary, `markdown`, has them all). Text
is escaped as the runner unescapes it (`%`, CR, LF in messages; also `:` and `,` in properties),
after control characters were made visible, so a log line can neither end the command nor start
one of its own: nothing from a log reaches the start of an output line, and no `##[` (the
runner's legacy commands, read anywhere in a line) is left in one.
"""

from __future__ import annotations

from logscan.diagnosis import Diagnosis, Finding
from logscan.render.context import RenderContext
from logscan.render.inert import inert, no_legacy_commands, no_workflow_commands
from logscan.render.order import ordered
from logscan.vocabulary import ExpectationStatus, Level, Severity, Verdict

MAX_PER_LEVEL = 10
# The annotation each level is.
COMMANDS = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties) -> str:
    """One workflow command; `message` may span lines (each made inert, then escaped)."""
    props = ",".join(f"{key}={escape_property(no_legacy_commands(inert(str(value))))}"
                     for key, value in properties.items() if value is not None)
    text = no_legacy_commands("\n".join(inert(line) for line in message.split("\n")))
    return f"::{kind}{' ' + props if props else ''}::{escape_data(text)}"


def _body(f: Finding) -> str:
    lines = [f.message]
    lines += [f"  {e.file}:{e.line}  {e.text.strip()}" for e in f.evidence]
    lines.append(f"hint: {f.hint}")
    return "\n".join(inert(line) for line in lines)


def _title(f: Finding, asked: dict[str, str]) -> str:
    if f.rule in asked:
        return f"logscan check: not met: {asked[f.rule]}"
    lead = "root cause: " if f.is_root else (
        "consequence: " if f.severity == Severity.ERROR and f.is_consequence else "")
    return f"logscan {lead}{f.heading}"


def render(d: Diagnosis, context: RenderContext) -> str:
    out, left = [], {"error": MAX_PER_LEVEL, "warning": MAX_PER_LEVEL, "notice": MAX_PER_LEVEL}
    hidden = 0
    if d.verdict == Verdict.INCONCLUSIVE or (d.fails and not any(
            f.severity == Severity.ERROR for f in d.findings)):
        out.append(command("error", d.summary(), title=f"logscan: {d.verdict}"))
        left["error"] -= 1
    unmet = {e.rule: e.asked for e in d.unmet}
    for e in d.expectations:
        if e.status == ExpectationStatus.NOT_CHECKED:
            out.append(command("warning", f"not checked: {e.asked}: {e.why}", title="logscan check"))
            left["warning"] -= 1
    for f in ordered(d):
        kind = COMMANDS[f.level]
        if left[kind] == 0:
            hidden += 1
            continue
        left[kind] -= 1
        out.append(command(kind, _body(f), file=f.location.file, line=f.location.line,
                           title=_title(f, unmet)))
    if hidden:
        out.append(command("notice", f"{hidden} more finding(s) not annotated (GitHub shows "
                                     f"{MAX_PER_LEVEL} per level): see the step summary",
                           title="logscan"))
    # The plain verdict line for the log; it cannot start with `::` but is defused all the same.
    out.append(no_workflow_commands(inert(d.summary())))
    return "\n".join(out) + "\n"
