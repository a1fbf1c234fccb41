"""The sweep's listing, what it prints: a table on a terminal, one line per job otherwise (cron mails it), JSON or
JSON Lines. Every row is a diagnosis record (JSON schema v1) plus `job_id` and `change`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from logscan.render.inert import inert
from logscan.vocabulary import Verdict

# 2: the sweep's times (sweep.started and .finished, a job's first_seen, changed_at and
# diagnosed_at) are ISO 8601 text in UTC, as every other time logscan writes; 1 had Unix times.
SCHEMA_VERSION = 2
# A job's times as the state keeps them (Unix time): ISO 8601 in every output.
JOB_TIMES = ("first_seen", "changed_at", "diagnosed_at")


def iso_time(stamp: float | None) -> str | None:
    """A Unix time as the sweep's outputs write every time: ISO 8601, UTC, to the microsecond."""
    return None if stamp is None else datetime.fromtimestamp(stamp, timezone.utc).isoformat()


def rows_to_print(changes: list[dict], every_job: list[dict] | None) -> list[dict]:
    """The changed jobs, or with --all every job, each with the change this sweep found (if any)."""
    if every_job is None:
        return changes
    latest = {c["job_id"]: c["change"] for c in changes}
    return [{**job, "change": latest.get(job["job_id"])} for job in every_job]


def render_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(_clean(r), sort_keys=True, ensure_ascii=True) + "\n" for r in rows)


def render_json(rows: list[dict], stats: dict) -> str:
    document = {"schema_version": SCHEMA_VERSION, "sweep": stats,
                "jobs": [_clean(r) for r in rows]}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


def json_pieces(rows: Iterable[dict], stats: dict) -> Iterator[str]:
    """render_json's document, a job at a time: memory does not grow with the jobs."""
    yield '{\n  "jobs": ['
    first = True
    for row in rows:
        job = json.dumps(_clean(row), indent=2, sort_keys=True, ensure_ascii=True)
        yield ("\n" if first else ",\n") + "\n".join("    " + line for line in job.split("\n"))
        first = False
    sweep = json.dumps(stats, indent=2, sort_keys=True, ensure_ascii=True).replace("\n", "\n  ")
    yield ("]" if first else "\n  ]") + f',\n  "schema_version": {SCHEMA_VERSION},\n  "sweep": {sweep}\n}}\n'


def _clean(row: dict) -> dict:
    return {k: iso_time(v) if k in JOB_TIMES and isinstance(v, (int, float)) else v
            for k, v in row.items() if k not in ("rel", "root")}


def _root_cause(row: dict) -> str:
    root = row.get("root_cause")
    if not root:
        return ""
    place = [f"node {root['node_rank']}" if root.get("node_rank") is not None else "",
             f"rank {root['rank']}" if root.get("rank") is not None else ""]
    place = ", ".join(p for p in place if p)
    return root["rule"] + (f" ({place})" if place else "")


def _last_activity(row: dict) -> str:
    times = [w["last_activity"] for w in row.get("workers", []) if w.get("last_activity")]
    return max(times)[:16].replace("T", " ") if times else ""


def render_lines(rows: list[dict]) -> str:
    """One line per job: `change: summary` (plain text, for cron's mail)."""
    return "".join(inert(f"{row.get('change') or 'unchanged'}: {row['summary']}") + "\n" for row in rows)


def render_table(rows: list[dict], stats: dict, color: bool, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, header_style="bold" if color else "")
    for column in ("job", "verdict", "root cause", "Workers", "last activity", "change"):
        # Only the root cause wraps, between words: a job id is copied whole, so it is never
        # folded; a rule id longer than its column is the only thing ever split.
        table.add_column(column, no_wrap=column != "root cause", overflow="fold")
    styles = {Verdict.FAILED: "red", Verdict.HEALTHY: "green", Verdict.RUNNING: "cyan",
              Verdict.INCONCLUSIVE: "yellow"}
    cells = []
    for row in rows:
        verdict = row["verdict"]
        # Text, never markup: job names and rule ids come from the files.
        cells.append((Text(inert(row["job_id"])), Text(verdict, style=styles.get(verdict, "")),
                      Text(inert(_root_cause(row))), Text(str(len(row.get("workers", [])))),
                      Text(_last_activity(row)), Text(row.get("change") or "")))
        table.add_row(*cells[-1])
    console = Console(record=True, width=width, color_system="standard" if color else None,
                      force_terminal=color, file=_Discard(), highlight=False)
    if rows and width is not None and _unbroken_width(table, cells) > width:
        # Too narrow for the table (long job ids): each job's id on a line of its own, whole,
        # and its other cells on the next, wrapped between words.
        for job, verdict, root, workers, last, change in cells:
            console.print(job, soft_wrap=True)
            rest = (verdict, root, Text(f"{workers.plain} Worker(s)"), last, change)
            line = Text("  ").join(cell for cell in rest if cell.plain)
            console.print(Text("  ") + line, overflow="fold")
        console.print(Text(summary_line(stats), style="dim"))
        return console.export_text(styles=color)
    if rows:
        # Narrower than its unbreakable cells (a long job id), the table is as wide as they
        # need and the terminal wraps its lines, rather than rich folding an id mid-word.
        console.width = max(console.width, _unbroken_width(table, cells))
        console.print(table)
    console.print(Text(summary_line(stats), style="dim"))
    return console.export_text(styles=color)


def _unbroken_width(table, cells) -> int:
    """The narrowest the table can be with no cell folded: every column as wide as its widest
    cell (the root cause: its longest word), and the padding between columns."""
    widths = []
    for index, column in enumerate(table.columns):
        texts = [row[index] for row in cells]
        if column.no_wrap:
            widths.append(max([len(column.header)] + [t.cell_len for t in texts]))
        else:
            words = [len(word) for t in texts for word in t.plain.split()]
            widths.append(max([len(column.header)] + words))
    return sum(widths) + 2 * (len(widths) - 1)


def summary_line(stats: dict) -> str:
    return (f"{stats['jobs']} job(s) swept, {stats['refreshed']} re-diagnosed, "
            f"{stats['changes']} change(s); {stats['files_opened']} file(s) opened, "
            f"{stats['bytes_read']} bytes read in {stats['duration_seconds']:.2f} s")


class _Discard:
    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass
