"""The per-Worker stage timeline: where each Worker (and each of its ranks) got, and when.

`layout()` places every stage mark of a Diagnosis on one axis from 0 to 1, shared by the terminal
(`--timeline`, drawn with rich) and the HTML report. The axis is the clock when every Worker's
lines carry times (`Diagnosis.time_axis` is TIME); otherwise the stages are drawn in their order
(one column per stage), and Workers are not placed against each other in time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from logscan.diagnosis import Diagnosis, Mark, ProcessSummary, WorkerSummary, format_duration
from logscan.render.inert import inert
from logscan.render.order import first_failure_apart, readable_time, shorten_path
from logscan.vocabulary import TIMELINE, MarkStage, RunStage, TimeAxis

if TYPE_CHECKING:
    from rich.text import Text

SYMBOLS = {MarkStage.LAUNCHED: "L", MarkStage.TORCHRUN_STARTED: "T", MarkStage.ENV_PRINTED: "E",
           MarkStage.FIRST_BATCH: "B", MarkStage.LAST_PROGRESS: "P", MarkStage.FAILURE: "X",
           MarkStage.END: "|"}
LEGEND = {MarkStage.LAUNCHED: "launched", MarkStage.TORCHRUN_STARTED: "torchrun",
          MarkStage.ENV_PRINTED: "env", MarkStage.FIRST_BATCH: "1st batch",
          MarkStage.LAST_PROGRESS: "last progress", MarkStage.FAILURE: "failure", MarkStage.END: "end"}
# Drawn over each other, the more telling mark wins a shared cell.
WEIGHT = {stage: i for i, stage in enumerate((
    MarkStage.END, MarkStage.LAUNCHED, MarkStage.TORCHRUN_STARTED, MarkStage.ENV_PRINTED,
    MarkStage.LAST_PROGRESS, MarkStage.FIRST_BATCH, MarkStage.FAILURE))}
# The marks a process trained between: the stretch drawn as training.
TRAINED = (MarkStage.FIRST_BATCH, MarkStage.LAST_PROGRESS)


@dataclass(frozen=True)
class Placed:
    mark: Mark
    x: float          # 0..1 along the axis


@dataclass(frozen=True)
class Row:
    label: str
    node_rank: int | None
    marks: tuple[Placed, ...]
    worker: WorkerSummary | None = None      # None: a node_rank the launch lines expect, no log
    process: ProcessSummary | None = None    # a rank's sub-row
    root_cause: bool = False
    first_failure: bool = False
    status: str = ""
    brief: str = ""    # the status in a terminal's column: a failure named by its kind only
    # The root cause's rank: what happened to it after it caused the failure (the page's badge
    # names the root cause).
    afterwards: str = ""


@dataclass(frozen=True)
class Layout:
    axis: TimeAxis
    start: datetime | None    # the axis ends (time axis only)
    end: datetime | None
    rows: tuple[Row, ...]

    def describe(self) -> str:
        if self.axis == TimeAxis.TIME:
            span = format_duration(self.end - self.start)
            return (f"on the clock: {_clock(self.start)} to {_clock(self.end)} "
                    f"({span}), from the times the lines carry")
        return ("in stage order: the lines carry no full times, so each column is a stage, "
                "not a time, and Workers are not placed against one clock")


def _clock(when: datetime | None) -> str:
    return readable_time(when) if when else "?"


def _placed_by_order(marks) -> tuple[Placed, ...]:
    last = len(TIMELINE) - 1
    return tuple(Placed(m, TIMELINE.index(m.stage) / last) for m in marks if m.stage in TIMELINE)


def _placed_by_time(marks, start: datetime, span: float) -> tuple[Placed, ...]:
    """Timed marks at their time; a mark without one between its timed neighbours, by line."""
    marks = list(marks)
    xs: list[float | None] = [
        (m.time - start).total_seconds() / span if m.time else None for m in marks]
    for i, x in enumerate(xs):
        if x is None:
            before = next((xs[j] for j in range(i - 1, -1, -1) if xs[j] is not None), 0.0)
            after = next((xs[j] for j in range(i + 1, len(xs)) if xs[j] is not None), before)
            xs[i] = (before + after) / 2
    return tuple(Placed(m, min(1.0, max(0.0, x))) for m, x in zip(marks, xs))


def layout(d: Diagnosis, ranks: bool = True) -> Layout:
    """Rows in Worker order, each Worker followed by its ranks (when `ranks`), and a row for
    every node_rank that has no log."""
    times = [m.time for w in d.workers for m in w.stages if m.time]
    axis = d.time_axis if times else TimeAxis.ORDER
    start = min(times) if axis == TimeAxis.TIME else None
    span = max(1e-9, (max(times) - start).total_seconds()) if axis == TimeAxis.TIME else 1.0

    def place(marks):
        return _placed_by_time(marks, start, span) if axis == TimeAxis.TIME else _placed_by_order(marks)

    first = d.first_failure
    rows = []
    for w in d.workers:
        root = d.root_cause is not None and d.root_cause.fingerprint in w.findings
        at_first = first is not None and first.node_rank is not None and first.node_rank == w.node_rank
        rows.append(Row(w.label, w.node_rank, place(w.stages), worker=w, root_cause=root,
                        first_failure=at_first, status=_status(d, w, root, at_first)))
        if not ranks:
            continue
        here = [p for p in d.processes if p.node_rank is not None and p.node_rank == w.node_rank]
        seen = {p.rank for p in here}
        # The rank the root cause or the first failure names gets its row even when it printed
        # nothing of its own (it died before its env line).
        named = [place.rank for place, on in ((d.root_cause, root), (first, at_first))
                 if on and place is not None and place.rank is not None and place.rank not in seen]
        here += [ProcessSummary(rank, w.node_rank, None, None, RunStage.INIT, None, False)
                 for rank in dict.fromkeys(named)]
        for p in here:
            first_here = at_first and first.rank == p.rank
            root_here = root and d.root_cause.rank == p.rank
            root_rule = d.root_cause.rule if root_here else None
            rows.append(Row(f"rank {p.rank}", p.node_rank, place(p.stages), worker=w, process=p,
                            root_cause=root_here, first_failure=first_here,
                            status=_process_status(p, root_rule),
                            brief=_process_status(p, root_rule, brief=True),
                            afterwards=_afterwards(p) if root_here else ""))
    root_node = d.root_cause.node_rank if d.root_cause else None
    for node in d.missing_node_ranks:
        root = root_node == node
        rows.append(Row(f"node {node}", node, (), root_cause=root,
                        status="no log" + (f", root cause: {d.root_cause.rule}" if root else "")))
    return Layout(axis, start, max(times) if axis == TimeAxis.TIME else None, tuple(rows))


def _status(d: Diagnosis, w: WorkerSummary, root: bool, first: bool) -> str:
    parts = [w.stage]
    if first and not (root and first_failure_apart(d) is None):
        parts.append("first failure")
    if root and d.root_cause:
        parts.append(f"root cause: {d.root_cause.rule}")
    return ", ".join(parts)


def _afterwards(p: ProcessSummary) -> str:
    """What the root cause's rank failed with: its own error, or what was done to it after."""
    if p.failed is None:
        return ""
    return f"then {p.failed}, a consequence" if p.cascade else p.failed


def _process_status(p: ProcessSummary, root_rule: str | None = None, brief: bool = False) -> str:
    """Where a rank stopped, in one role: the root cause's rank is that, whatever torchrun did to
    it afterwards (a straggler's SIGTERM is a consequence of the stall, not a cascade of its own).
    `brief` names a raised exception by its type, so the line fits a terminal whole."""
    if brief and p.failed is not None:
        p = replace(p, failed=p.failed.split(":", 1)[0].split(" (", 1)[0])
    if root_rule is not None:
        then = _afterwards(p)
        return f"root cause: {root_rule}" + (f"; {then}" if p.cascade else f": {then}" if then else "")
    if p.failed is None and not p.stages:
        return "no line of its own: it never printed its env line"
    if p.failed is None:
        return f"no failure ({p.stage})"
    return ("cascade: " if p.cascade else "failed: ") + p.failed


# --- the terminal drawing ---

def _bar(row: Row, width: int) -> Text:
    from rich.text import Text

    cells = [" "] * width
    weights = [-1] * width
    styles = [""] * width
    xs = sorted(row.marks, key=lambda p: p.x)
    if xs:
        lo, hi = round(xs[0].x * (width - 1)), round(xs[-1].x * (width - 1))
        trained = [p for p in xs if p.mark.stage in TRAINED]
        t_lo = round(trained[0].x * (width - 1)) if trained else None
        t_hi = round(trained[-1].x * (width - 1)) if trained else None
        for i in range(lo, hi + 1):
            cells[i], styles[i] = "-", "dim"
            if t_lo is not None and t_lo <= i <= max(t_hi, t_lo):
                cells[i], styles[i] = "=", "green"
    for p in xs:
        i = round(p.x * (width - 1))
        weight = WEIGHT.get(p.mark.stage, 0)
        if weight >= weights[i]:
            weights[i] = weight
            cells[i] = SYMBOLS.get(p.mark.stage, "?")
            styles[i] = "bold red" if p.mark.stage == MarkStage.FAILURE else "bold"
    text = Text()
    for cell, style in zip(cells, styles):
        text.append(cell, style=style or None)
    return text


def terminal_timeline(d: Diagnosis, width: int, ranks: bool = False):
    """A rich Table: one line per Worker (and per rank with `ranks`), its marks on a bar."""
    from rich.table import Table
    from rich.text import Text

    lay = layout(d, ranks=ranks)
    # A label (a log's path, for a Worker with no node_rank) takes at most a third of the line,
    # shortened from the left: the status beside it keeps room to read.
    label_room = max(8, width // 3)
    labels = [("  " if r.process else "") + shorten_path(inert(r.label), label_room - (2 if r.process else 0))
              for r in lay.rows]
    label_width = max(map(len, labels), default=6)
    bar_width = max(14, min(60, (width - label_width) // 2 - 6))
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, min_width=label_width)
    table.add_column(no_wrap=True, width=bar_width)
    # A status wraps rather than being cut: what the rank failed with is the point of the row.
    table.add_column(overflow="fold", max_width=max(10, width - label_width - bar_width - 2))
    for row, label in zip(lay.rows, labels):
        label = Text(label, style="bold red" if row.root_cause else None)
        status = Text(inert(row.brief or row.status), style="red" if row.root_cause or row.first_failure else "dim")
        table.add_row(label, _bar(row, bar_width) if row.marks else Text("(no log)", style="red"),
                      status)
    legend = " ".join(f"{symbol} {LEGEND[stage]}" for stage, symbol in SYMBOLS.items())
    return [Text("Timeline " + lay.describe(), style="bold"), table,
            Text(legend + " = training", style="dim")]
