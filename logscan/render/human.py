"""The terminal report: the verdict, the root cause with its best evidence line and hint, one line
per cascade folded under it, the other findings, where stuck ranks stopped, and the Worker table.

With a `width` (a terminal) every line fits it: long lines wrap at words with their continuation
indented, paths are shortened from the left or listed under the table, never folded letter by
letter. Without one (a pipe, a file) no line is wrapped or cut, so a report keeps every character
and every log line stays whole for grep; only the table is laid out for $COLUMNS (or 120).
`verbose` shows every evidence line and every cascade in full. A hint is shown once.
"""

from __future__ import annotations

import io
import os
import re

from rich.console import Console
from rich.table import Table
from rich.text import Text

from logscan.diagnosis import Diagnosis, Finding, Mark, number_ranges, place_label
from logscan.render.context import RenderContext
from logscan.render.inert import inert, no_workflow_commands
from logscan.render.order import (first_failure_apart, novel_lines_reason, readable_time, shorten_path,
                                  straggler_line, stuck_lines)
from logscan.vocabulary import ExpectationStatus, Severity, Verdict

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
# A directory of 100,000 stray logs must not make a 100,000-row report: past these, the human
# report says how many it left out (JSON keeps everything).
MAX_TABLE_ROWS = 64
PIPE_WIDTH = 120
_TRAILING = re.compile(r"[ ]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


class _Report:
    """Lines for one console: wrapped with hanging indents at a width, or whole (soft)."""

    def __init__(self, console: Console, wrap: bool):
        self.console, self.wrap = console, wrap
        # A pipe or a file: nothing is wrapped, but the Worker table is laid out for $COLUMNS.
        self.width = console.width if wrap else int(os.environ.get("COLUMNS", "") or PIPE_WIDTH)

    def line(self, text: Text | str = "", indent: int = 0, hang: int = 2) -> None:
        """One logical line; wrapped, its continuation lines indented `indent + hang`."""
        text = Text(text) if isinstance(text, str) else text
        if not self.wrap:
            self.console.print(Text(" " * indent) + text, soft_wrap=True)
            return
        text = _paths_fitted(text, max(8, self.width - indent - hang))
        if indent + hang == 0:
            self.console.print(text)
            return
        # Two columns: the first line's first `hang` characters (after `indent`), and the rest,
        # which wraps at words and so indents every continuation line by `indent + hang`.
        grid = Table.grid()
        grid.add_column(no_wrap=True, width=indent + hang)
        grid.add_column(overflow="fold", max_width=max(8, self.width - indent - hang))
        grid.add_row(Text(" " * indent) + text[:hang], text[hang:])
        self.console.print(grid)


# A word holding a path (a `/` with something on either side).
_PATH_WORD = re.compile(r"\S+/\S+")


def _paths_fitted(text: Text, room: int) -> Text:
    """`text` with every path longer than `room` shortened from the left, so that wrapping never
    folds a path letter by letter over two lines."""
    too_long = [m for m in _PATH_WORD.finditer(text.plain) if len(m.group()) > room]
    console = Console() if too_long else None
    for found in reversed(too_long):
        start, end = found.span()
        style = text.get_style_at_offset(console, start)
        text = text[:start] + Text(shorten_path(found.group(), room), style=style) + text[end:]
    return text


def _dash(value) -> str:
    return "-" if value is None else str(value)


def _shape(w) -> str:
    if w.nnodes is None and w.gpus_per_node is None:
        return "-"
    procs = f"={w.total_procs}" if w.total_procs is not None else ""
    return f"{_dash(w.nnodes)}x{_dash(w.gpus_per_node)}{procs}"


def _table(rows: list[list[str]], header: list[str], log_column: str | None) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in header:
        table.add_column(column, no_wrap=True)
    if log_column is not None:
        table.add_column(log_column, no_wrap=True)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _workers(r: _Report, d: Diagnosis) -> None:
    header = ["node", "host", "shape", "master", "ranks", "stage"]
    shown = d.workers[:MAX_TABLE_ROWS]
    rows = [[inert(str(v)) for v in (
        w.node_rank if w.node_rank is not None else "?", w.host or "-", _shape(w), w.master or "-",
        number_ranges(w.ranks, ",") or "-", w.stage)] for w in shown]
    files = [inert(", ".join(w.files)) for w in shown]
    measure = Console(width=10_000, file=io.StringIO())
    base = measure.measure(_table(rows, header, None)).maximum
    room = r.width
    r.line(Text("Workers (shape: nnodes x gpus_per_node = total processes)", style="bold"))
    if base + 2 + max(map(len, files), default=0) <= room:
        r.console.print(_table([row + [f] for row, f in zip(rows, files)], header, "log"))
    elif base + 6 <= room:
        r.console.print(_table([row + [f"[{i}]"] for i, row in enumerate(rows, 1)], header, "log"))
        for i, w in enumerate(shown, 1):
            for path in w.files:
                ref = f"  [{i}] "
                r.line(Text(ref) + Text(shorten_path(inert(path), room - len(ref)), style="dim"), hang=0)
    else:  # too narrow for a table: one wrapped line per Worker, its logs under it
        for row, w in zip(rows, shown):
            node, *rest = row
            r.line(Text(f"node {node}", style="bold") + Text("  " + "  ".join(
                f"{name} {value}" for name, value in zip(header[1:], rest))), hang=4)
            for path in w.files:
                r.line(Text("    ") + Text(shorten_path(inert(path), room - 4), style="dim"), hang=0)
    if len(d.workers) > MAX_TABLE_ROWS:
        r.line(Text(f"… {len(d.workers) - MAX_TABLE_ROWS} more Worker(s) not shown; "
                    "--format json lists them all", style="dim"))
    silent = [w.label for w in d.workers if w.trained_silently]
    if silent:
        r.line(Text(inert(f"{', '.join(silent[:4])}{' and more' if len(silent) > 4 else ''} printed nothing "
                          f"of its processes' training, which is normal when only rank 0 logs: the world trained, "
                          f"and DDP steps every rank together"), style="dim"))


def _head(f: Finding, label: str | None = None) -> Text:
    head = Text()
    head.append(label or f"{f.severity.upper():7} ", style=SEVERITY_STYLE[f.severity])
    head.append(inert(f.heading), style="bold")
    return head


class _Findings:
    def __init__(self, r: _Report, d: Diagnosis, verbose: bool):
        self.r, self.d, self.verbose = r, d, verbose
        self.hints_shown: set[str] = set()
        self.lines_shown: set[tuple[str, int]] = set()
        self.children: dict[str, list[Finding]] = {}
        for f in d.findings:
            if f.caused_by is not None:
                self.children.setdefault(f.caused_by, []).append(f)

    def evidence(self, f: Finding, indent: int) -> None:
        """Its best evidence line (every line with -v); a line an earlier block showed is not
        shown again. A straggler's own last line comes first, labelled, then the others' wait."""
        own = straggler_line(self.d, f)
        if self.verbose:
            shown, fresh = list(f.evidence), list(f.evidence)
        else:
            fresh = [e for e in f.evidence if (e.file, e.line) not in self.lines_shown]
            shown = fresh[:2 if own is not None else 1]
        if f.evidence and not fresh:
            self.r.line(Text("(its evidence is the line shown above)", style="dim"), indent=indent)
        waiting_said = False
        for e in shown:
            if own is not None and (e.file, e.line) == (own.file, own.line):
                self.r.line(Text(f"rank {f.rank} stopped here (its own last line):", style="dim"),
                            indent=indent)
            elif own is not None and not waiting_said:
                waiting_said = True
                self.r.line(Text("the ranks that waited for it:", style="dim"), indent=indent)
            _line_at(self.r, e.file, e.line, e.text, indent)
            self.lines_shown.add((e.file, e.line))
        more = len(fresh) - len(shown)
        if more:
            self.r.line(Text(f"(+{more} more evidence line{'s' if more > 1 else ''}: -v shows them)",
                        style="dim"), indent=indent)

    def hint(self, f: Finding, indent: int) -> None:
        if not f.hint or f.hint in self.hints_shown:
            return
        self.hints_shown.add(f.hint)
        self.r.line(Text("hint: " + inert(f.hint), style="green"), indent=indent, hang=6)

    def block(self, f: Finding, indent: int = 0, label: str | None = None,
              message: bool = True) -> None:
        head = _head(f, label)
        if message:
            head.append(": " + inert(f.message))
        self.r.line(head, indent=indent, hang=8 if label is None else 2)
        self.evidence(f, indent + 4)
        self.hint(f, indent + 4)
        self.cascades(f, indent + 4)

    def cascades(self, f: Finding, indent: int) -> None:
        children = self.children.get(f.fingerprint, [])
        if not children:
            return
        if self.verbose:
            for c in children:
                self.r.line(Text("↳ then:", style="dim"), indent=indent)
                self.block(c, indent + 2)
            return
        self.r.line(Text(f"then, as a consequence ({len(children)}; -v shows their evidence):",
                         style="dim"), indent=indent)
        for c in children:
            self.r.line(Text(f"↳ {inert(c.title)}"),
                        indent=indent + 2, hang=2)


# How each expectation's result reads in the gate's section.
_EXPECTATION_STYLE = {ExpectationStatus.HELD: "green", ExpectationStatus.NOT_MET: "bold red",
                      ExpectationStatus.NOT_CHECKED: "yellow"}


def _gate(r: _Report, d: Diagnosis, report: "_Findings") -> None:
    """What `logscan check` asked the logs to show, and what it found: the gate's result, apart
    from the job's verdict above. An unmet one shows its finding's evidence and hint."""
    r.line()
    r.line(Text("Expectations (logscan check):", style="bold"))
    unmet = {f.rule: f for f in d.findings if d.is_expectation(f)}
    for e in d.expectations:
        head = Text(f"{e.status:12}", style=_EXPECTATION_STYLE[e.status])
        head.append(inert(e.asked), style="bold")
        if e.why:
            head.append(": " + inert(e.why))
        r.line(head, hang=12)
        if e.rule in unmet:
            report.evidence(unmet[e.rule], 4)
            report.hint(unmet[e.rule], 4)


def _line_at(r: _Report, file: str, line: int, text: str, indent: int) -> None:
    """`file:line  text` on one line where it fits; else the place, and the text under it."""
    where, text = inert(f"{file}:{line}"), inert(text.strip())
    if r.wrap and indent + len(where) + 2 + len(text) > r.width:
        r.line(Text(shorten_path(where, r.width - indent), style="dim"), indent=indent, hang=0)
        r.line(Text(text), indent=indent + 2, hang=0)
    else:
        r.line(Text(where, style="dim") + Text("  " + text), indent=indent, hang=4)


def _when(mark: Mark, written: str | None) -> str:
    if mark.time:
        return f"at {readable_time(mark.time)}"
    if written:
        return f"log last written {readable_time(written)}"
    return ""


def _stuck(r: _Report, d: Diagnosis) -> None:
    entries = stuck_lines(d)
    if not entries:
        return
    r.line()
    r.line(Text("Where the waiting ranks stopped (the last line of each):", style="bold"))
    if d.clock_note and not all(mark.time for _, mark, _ in entries):
        r.line(Text(d.clock_note, style="dim"), indent=2, hang=0)
    for who, mark, written in entries:
        when = _when(mark, written)
        r.line(Text(f"{who}" + (": " if when else ""), style="bold") + Text(when, style="dim"),
               indent=2, hang=4)
        _line_at(r, mark.file, mark.line, mark.text, 6)


# Novel lines a report shows: the first few where no rule explains the job, all of them under -v.
NOVEL_LINES_SHOWN = 3


def _novel(r: _Report, d: Diagnosis, verbose: bool) -> None:
    if not d.novel_lines or not (verbose or d.unexplained):
        return
    r.line()
    why = novel_lines_reason(d)
    r.line(Text(f"Lines that set the failing rank apart from its peers ({why}; the most telling first):",
                style="bold"))
    for n in d.novel_lines if verbose else d.novel_lines[:NOVEL_LINES_SHOWN]:
        _line_at(r, n.file, n.line, n.text, 2)
        r.line(Text(inert(n.why), style="dim"), indent=6, hang=0)


def _harmless(r: _Report, d: Diagnosis) -> None:
    """The known-harmless warnings the logs hold, each once: what it means, where it first is."""
    if not d.harmless:
        return
    r.line()
    r.line(Text("Known-harmless warnings (none of them is a failure):", style="bold"))
    for note in d.harmless:
        times = f" ({note.count} lines)" if note.count > 1 else ""
        r.line(Text(inert(note.rule), style="cyan") + Text(inert(times)) + Text(": " + inert(note.meaning)),
               indent=2, hang=4)
        _line_at(r, note.file, note.line, note.text, 6)


def render(d: Diagnosis, context: RenderContext) -> str:
    """The report; the context's `width` wraps it for a terminal of that many columns (None: a
    pipe or file)."""
    color, width, verbose, timeline = context.color, context.width, context.verbose, context.timeline
    buffer = io.StringIO()
    wrap = width is not None
    console = Console(file=buffer, force_terminal=color, no_color=not color,
                      width=width if wrap else 10_000, highlight=False, emoji=False,
                      markup=False, soft_wrap=not wrap)
    r = _Report(console, wrap)
    style = "bold green" if d.healthy else ("bold yellow" if d.verdict == Verdict.RUNNING else "bold red")
    r.line(Text(inert(d.summary()), style=style))
    notes = []
    if d.job_status:
        notes.append(f"platform job status: {inert(d.job_status)}")
    if d.config_file:
        notes.append(f"settings from {inert(d.config_file)}")
    first = first_failure_apart(d)
    if first is not None and (first.node_rank is not None or first.rank is not None):
        notes.append("first failure:" + place_label(first.node_rank, first.rank).strip(" ()").join(" ."))
    if notes:
        r.line(Text("; ".join(notes).rstrip(".")))

    report = _Findings(r, d, verbose)
    root = d.root_cause
    if root is not None:
        r.line()
        report.block(root, label="root cause: ", message=False)
    _novel(r, d, verbose)
    known = {f.fingerprint for f in d.findings}
    others = [f for f in d.findings if f is not root and not d.is_expectation(f) and
              (f.caused_by is None or f.caused_by not in known)]
    if others:
        r.line()
        r.line(Text("Other findings (each needs its own fix):" if root is not None else "Findings:",
                    style="bold"))
        for f in others:
            report.block(f, indent=0)
    if d.expectations:
        _gate(r, d, report)
    if d.stuck:
        _stuck(r, d)
    _harmless(r, d)
    if timeline:
        from logscan.render.timeline import terminal_timeline

        r.line()
        for renderable in terminal_timeline(d, r.width, ranks=verbose):
            r.line(renderable) if isinstance(renderable, Text) else console.print(renderable)
    if d.workers:  # a lint report has none
        r.line()
        _workers(r, d)
    for note in d.inputs:
        if note.minor and not verbose:
            continue
        r.line(Text("note: " + inert(f"{note.path}: {note.problem}"), style="yellow"), hang=6)
    r.line()
    r.line(Text(f"{d.files_scanned} file(s), {d.lines_scanned} lines, "
                f"{len(d.findings)} finding(s)", style="dim"))
    return no_workflow_commands(_TRAILING.sub(r"\1", buffer.getvalue()))
