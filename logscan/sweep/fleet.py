"""The fleet view (`--summary`, with pandas) and the export (`--export FILE.csv|.jsonl|.parquet`):
one row per job in the schema below, which DuckDB and Spark read as is. Times are ISO 8601 text
in UTC in CSV and JSON Lines, and typed in Parquet (timestamp[us, UTC]; `day` a date); absent
values are empty (CSV) or null.

The fleet view counts jobs throughout: `jobs_by_rule` counts a job once for each rule it has
findings of (the metric logscan_sweep_findings counts the findings themselves).

| column                | type    | meaning                                                      |
|-----------------------|---------|--------------------------------------------------------------|
| job_id                | text    | the swept DIR as given, then the run directory below it      |
| job_path              | text    | absolute path of the run directory                           |
| group                 | text    | the first directory below DIR (a user or project)            |
| verdict               | text    | HEALTHY, FAILED, RUNNING or INCONCLUSIVE                     |
| root_cause_rule       | text    | the root cause's rule id (FAILED jobs)                       |
| root_cause_node_rank  | integer | where it happened                                            |
| root_cause_rank       | integer |                                                              |
| root_cause_message    | text    |                                                              |
| summary               | text    | the one-line verdict                                         |
| workers               | integer | Workers found                                                |
| findings              | integer | findings of every severity                                   |
| rules                 | text    | the findings' rule ids, sorted, comma-separated              |
| last_activity         | time    | the latest Worker's last activity                            |
| day                   | date    | YYYY-MM-DD of last_activity (else of first_seen)             |
| first_seen            | time    | when a sweep first saw the job                               |
| changed_at            | time    | when its verdict or root cause last changed                  |
| diagnosed_at          | time    | when it was last diagnosed                                   |
| shard                 | text    | K/N of the sweep that wrote the row ('' unsharded)           |
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from pathlib import Path

from logscan.errors import InputError
from logscan.files.discovery import printable
from logscan.output_files import replace_file, replace_text
from logscan.render.inert import inert, no_workflow_commands
from logscan.sweep.listing import iso_time
from logscan.vocabulary import Verdict

# Typed as timestamps (UTC) and a date in Parquet; text elsewhere.
TIME_COLUMNS = ("last_activity", "first_seen", "changed_at", "diagnosed_at")
DATE_COLUMNS = ("day",)
COLUMNS = ("job_id", "job_path", "group", "verdict", "root_cause_rule", "root_cause_node_rank",
           "root_cause_rank", "root_cause_message", "summary", "workers", "findings", "rules",
           "last_activity", "day", "first_seen", "changed_at", "diagnosed_at", "shard")
EXPORT_SUFFIXES = (".csv", ".jsonl", ".parquet")


def export_rows(jobs: Iterable[dict], shard: str | None) -> list[dict]:
    rows = []
    for job in jobs:
        root = job.get("root_cause") or {}
        times = [w["last_activity"] for w in job.get("workers", []) if w.get("last_activity")]
        last = max(times) if times else None
        first_seen = iso_time(job.get("first_seen"))
        rows.append({
            "job_id": job["job_id"],
            "job_path": printable(os.path.join(job["root"], job["rel"]) if job["rel"] else job["root"]),
            "group": printable(job["rel"].split("/")[0]) if "/" in job["rel"] else "",
            "verdict": job["verdict"],
            "root_cause_rule": root.get("rule"),
            "root_cause_node_rank": root.get("node_rank"),
            "root_cause_rank": root.get("rank"),
            "root_cause_message": root.get("message"),
            "summary": job["summary"],
            "workers": len(job.get("workers", [])),
            "findings": len(job.get("findings", [])),
            "rules": ",".join(sorted({f["rule"] for f in job.get("findings", [])})),
            "last_activity": last,
            "day": (last or first_seen or "")[:10] or None,
            "first_seen": first_seen,
            "changed_at": iso_time(job.get("changed_at")),
            "diagnosed_at": iso_time(job.get("diagnosed_at")),
            "shard": shard or "",
        })
    return rows


# What makes a spreadsheet read a cell as a formula (or, a tab or CR first, may turn it into one).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_inert(value):
    """A CSV cell that Excel, LibreOffice or Sheets shows as the text it is: one that would start
    a formula (a directory named `=HYPERLINK(...)`) is written after a `'`."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def frame(rows: list[dict]):
    import pandas as pd

    table = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in ("root_cause_node_rank", "root_cause_rank"):
        table[column] = table[column].astype("Int64")
    return table


def typed(table):
    """The export's times as timestamps in UTC (microseconds) and `day` as a date, for Parquet."""
    import pandas as pd

    table = table.copy()
    for column in TIME_COLUMNS:
        table[column] = pd.to_datetime(table[column], utc=True, format="ISO8601").astype(
            "datetime64[us, UTC]")
    for column in DATE_COLUMNS:
        table[column] = pd.to_datetime(table[column], format="%Y-%m-%d").dt.date
    return table


def write_export(path: Path, rows: list[dict]) -> None:
    """CSV, JSON Lines or Parquet by the file's suffix, written beside it and renamed."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        out = io.StringIO()
        # RFC 4180's CRLF: Python's csv quotes a field holding a character of the line
        # terminator, so a name with a CR in it stays one field of one row.
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows({column: spreadsheet_inert(value) for column, value in row.items()}
                         for row in rows)
        replace_text(path, out.getvalue())
    elif suffix == ".jsonl":
        replace_text(path, "".join(json.dumps({c: r[c] for c in COLUMNS}, ensure_ascii=True)
                                       + "\n" for r in rows))
    elif suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError("--export FILE.parquet needs pyarrow: pip install "
                             "'ddp-logscan[parquet]' (or export .csv / .jsonl)") from None
        table = typed(frame(rows))
        replace_file(path, lambda handle: table.to_parquet(handle, index=False))
    else:
        raise InputError(f"--export {path}: the name must end in {', '.join(EXPORT_SUFFIXES)}")


def summarize(rows: list[dict]) -> dict:
    """The fleet view, every count a count of jobs: jobs by verdict, failed jobs by root cause,
    the rules most jobs have findings of (a job counted once per rule), jobs by day and by group
    (user or project directory), each as {label: counts}."""
    table = frame(rows)
    if table.empty:
        return {"jobs": 0, "by_verdict": {}, "by_root_cause": {}, "jobs_by_rule": {}, "by_day": {},
                "by_group": {}}
    by_verdict = table["verdict"].value_counts().sort_index()
    failed = table[table["verdict"] == Verdict.FAILED]
    by_root = failed["root_cause_rule"].fillna("(none)").value_counts()
    rules = table["rules"].fillna("").str.split(",").explode()
    jobs_by_rule = rules[rules != ""].value_counts().head(10)  # `rules` holds each id once
    by_day = table.pivot_table(index="day", columns="verdict", values="job_id", aggfunc="count",
                               fill_value=0).sort_index(ascending=False).head(14)
    by_group = table.pivot_table(index="group", columns="verdict", values="job_id",
                                 aggfunc="count", fill_value=0)
    by_group = by_group.loc[by_group.sum(axis=1).sort_values(ascending=False).index].head(20)
    return {
        "jobs": int(len(table)),
        "by_verdict": {k: int(v) for k, v in by_verdict.items()},
        "by_root_cause": {k: int(v) for k, v in by_root.items()},
        "jobs_by_rule": {k: int(v) for k, v in jobs_by_rule.items()},
        "by_day": {str(day): {k: int(v) for k, v in counts.items()} for day, counts in by_day.iterrows()},
        "by_group": {str(g) or "(top)": {k: int(v) for k, v in counts.items()}
                     for g, counts in by_group.iterrows()},
    }


def render_summary(view: dict) -> str:
    """The fleet view for a reader: every label (a directory's name among them) inert, as the
    listing's table shows it."""
    lines = [f"{view['jobs']} job(s)"]

    def section(title: str, counts: dict) -> None:
        lines.append("")
        lines.append(title)
        if not counts:
            lines.append("  (none)")
        labels = {key: inert(str(key)) for key in counts}
        width = max(map(len, labels.values()), default=0)
        for key, value in counts.items():
            if isinstance(value, dict):
                value = ", ".join(f"{v} {inert(str(k))}" for k, v in value.items() if v)
            lines.append(f"  {labels[key]:<{width}}  {value}")

    section("by verdict", view["by_verdict"])
    section("failed jobs by root cause", view["by_root_cause"])
    section("jobs by rule (a job counted once per rule it has findings of)", view["jobs_by_rule"])
    section("by day (last activity)", view["by_day"])
    section("by user/project directory", view["by_group"])
    return no_workflow_commands("\n".join(lines) + "\n")
