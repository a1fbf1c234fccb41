"""What `logscan watch` prints as a job runs: one event at a time, a finding when it is known and
the verdict at the end. Human lines for a terminal or a log file; JSON Lines for machines (one
object a line, `event` first: `finding` or `end`)."""

from __future__ import annotations

import json
from datetime import datetime

from logscan.diagnosis import Diagnosis, Finding
from logscan.render.inert import inert, no_legacy_commands_in_data, no_workflow_commands
from logscan.render.json_record import diagnosis_record, finding_record


def _clock(at: datetime) -> str:
    return at.astimezone().strftime("%H:%M:%S")


def finding_text(f: Finding, d: Diagnosis, at: datetime) -> str:
    lines = [f"{_clock(at)} {f.severity} {f.title}"]
    for e in f.evidence[:3]:
        lines.append(f"    {e.file}:{e.line}  {e.text}")
    if not f.evidence and f.location is not None:
        lines.append(f"    {f.location.file}:{f.location.line}")
    if f.hint:
        lines.append(f"    hint: {f.hint}")
    return no_workflow_commands("\n".join(inert(text) for text in lines) + "\n")


def end_text(d: Diagnosis, because: str, at: datetime) -> str:
    lines = [f"{_clock(at)} ended ({because}): {d.summary()}"]
    if d.root_cause is not None:
        lines.append(f"    root cause: {d.root_cause.title}")
    return no_workflow_commands("\n".join(inert(text) for text in lines) + "\n")


def _line(record: dict) -> str:
    return no_legacy_commands_in_data(json.dumps(record, sort_keys=False, ensure_ascii=False), "\\u0023") + "\n"


def finding_json(f: Finding, d: Diagnosis, at: datetime) -> str:
    return _line({"event": "finding", "time": at.isoformat(), "verdict": d.verdict,
                  "finding": finding_record(f)})


def end_json(d: Diagnosis, because: str, at: datetime) -> str:
    return _line({"event": "end", "time": at.isoformat(), "because": because,
                  "diagnosis": diagnosis_record(d)})
