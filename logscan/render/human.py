"""The terminal report: verdict, Worker table, findings with evidence and hints."""

from __future__ import annotations

import io
import shutil

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from logscan.diagnosis import Diagnosis, Finding, number_ranges, place_label
from logscan.render.inert import inert, no_workflow_commands

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# A directory of 100,000 stray logs must not make a 100,000-row report: past these, the human
# report says how many it left out (JSON keeps everything).
MAX_TABLE_ROWS = 64


def _workers_table(d: Diagnosis) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("node", "host", "nnodes", "gpus", "procs", "master", "ranks", "stage"):
        table.add_column(column, no_wrap=True)
    table.add_column("files", overflow="fold")
    for w in d.workers[:MAX_TABLE_ROWS]:
        table.add_row(*(Text(inert(str(v))) for v in (
            w.node_rank if w.node_rank is not None else "?", w.host or "-",
            _dash(w.nnodes), _dash(w.gpus_per_node), _dash(w.total_procs), w.master or "-",
            number_ranges(w.ranks, ",") or "-", w.stage, ", ".join(w.files))))
    return table


def _dash(value) -> str:
    return "-" if value is None else str(value)


def _finding_block(f: Finding, cascades: list[Finding], indent: str = "", marker: str = "") -> list[Text]:
    head = Text(indent + marker)
    head.append(f"{f.severity.upper():7}", style=SEVERITY_STYLE[f.severity])
    head.append(f" {f.rule}", style="bold")
    head.append(place_label(f.node_rank, f.rank))
    if f.cause:
        head.append(f" [cause: {f.cause}]")
    head.append(": " + inert(f.message))
    lines = [head]
    for e in f.evidence:
        line = Text(f"{indent}    ")
        line.append(inert(f"{e.file}:{e.line}"), style="dim")
        line.append("  " + inert(e.text.strip()))
        lines.append(line)
    lines.append(Text(f"{indent}    hint: " + inert(f.hint), style="green"))
    for c in cascades:
        lines += _finding_block(c, [], indent + "    ", marker="↳ ")
    return lines


def render_human(d: Diagnosis, color: bool = False, width: int | None = None) -> str:
    """Plain text unless `color`; lines are never cut, so a report file keeps every character."""
    buffer = io.StringIO()
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns if color else 1000
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width,
                      highlight=False, emoji=False, markup=False, soft_wrap=True)
    style = "bold green" if d.healthy else "bold red"
    console.print(Text(inert(d.summary()), style=style))
    if d.job_status:
        console.print(Text(f"platform job status: {d.job_status}"))
    console.print()
    console.print(_workers_table(d))
    if len(d.workers) > MAX_TABLE_ROWS:
        console.print(Text(f"… {len(d.workers) - MAX_TABLE_ROWS} more Worker(s) not shown; "
                           "--format json lists them all", style="dim"))
    roots = [f for f in d.findings if f.caused_by is None]
    children: dict[str, list[Finding]] = {}
    for f in d.findings:
        if f.caused_by is not None:
            children.setdefault(f.caused_by, []).append(f)
    known = {f.key for f in d.findings}
    roots += [f for f in d.findings if f.caused_by is not None and f.caused_by not in known]
    if roots:
        console.print()
        for f in roots:
            console.print(Group(*_finding_block(f, children.get(f.key, []))))
    for note in d.inputs:
        console.print(Text("note: " + inert(f"{note.path}: {note.problem}"), style="yellow"))
    console.print()
    console.print(Text(f"{d.files_scanned} file(s), {d.lines_scanned} lines, "
                       f"{len(d.findings)} finding(s)", style="dim"))
    return no_workflow_commands(buffer.getvalue())
