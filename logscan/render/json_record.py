"""The JSON report: one object, sorted and deterministic, valid against the schema shipped beside
it (logscan/render/schema/diagnosis.schema.json, described in docs/json.md).

The root cause comes first and whole (rule, fingerprint, evidence, hint); `findings` lists it
first too. A finding is named by its fingerprint, which holds no path; `caused_by` and a Worker's
`findings` name findings by it. Times are ISO 8601 (`--MM-DDTHH:MM:SS` where the line gave no
year).
"""

from __future__ import annotations

import json
from datetime import datetime

from logscan.diagnosis import Diagnosis, Finding, Mark
from logscan.render.context import RenderContext
from logscan.render.inert import no_legacy_commands_in_data
from logscan.render.order import ordered

# Raised when a key is renamed or removed, or a value changes meaning (docs/json.md keeps the log).
SCHEMA_VERSION = 2


def _time(when: datetime | None) -> str | None:
    return when.isoformat() if when is not None else None


def _role(f: Finding) -> str:
    return "root-cause" if f.is_root else ("consequence" if f.is_consequence else "finding")


def finding_record(f: Finding) -> dict:
    return {
        "fingerprint": f.fingerprint,
        "rule": f.rule,
        "title": f.title,
        "severity": f.severity,
        "level": f.level,
        "role": _role(f),
        "caused_by": f.caused_by,
        "hang": f.hang,
        "message": f.message,
        "hint": f.hint,
        "node_rank": f.node_rank,
        "rank": f.rank,
        "node_ranks": list(f.node_ranks),
        "ranks": list(f.ranks),
        "worker": f.worker,
        "stage": f.stage,
        "cause": f.cause,
        "time": _time(f.time),
        "location": {"file": f.location.file, "line": f.location.line} if f.location else None,
        "evidence": [{"file": e.file, "line": e.line, "text": e.text} for e in f.evidence],
    }


def _mark(m: Mark | None) -> dict | None:
    if m is None:
        return None
    return {"stage": m.stage, "file": m.file, "line": m.line, "text": m.text, "time": _time(m.time)}


def diagnosis_record(d: Diagnosis) -> dict:
    root = d.root_cause
    return {
        "schema_version": SCHEMA_VERSION,
        "job": d.job,
        "verdict": d.verdict,
        "verdict_reason": d.verdict_reason,
        "fails": d.fails,
        "healthy": d.healthy,
        "summary": d.summary(),
        "job_status": d.job_status,
        "config_file": d.config_file,
        "root_cause": None if root is None else finding_record(root),
        "first_failure": None if d.first_failure is None else {
            "node_rank": d.first_failure.node_rank, "rank": d.first_failure.rank},
        "reached_first_batch": d.reached_first_batch,
        "finished": d.finished,
        "missing_node_ranks": list(d.missing_node_ranks),
        "missing_ranks": list(d.missing_ranks),
        "workers": [{
            "node_rank": w.node_rank, "label": w.label, "host": w.host, "files": list(w.files),
            "nnodes": w.nnodes, "gpus_per_node": w.gpus_per_node, "total_procs": w.total_procs,
            "master": w.master, "ranks": list(w.ranks), "reached_first_batch": w.reached_first_batch,
            "stage": w.stage, "last_activity": _time(w.last_activity), "last_known": _time(w.last_known),
            "last_line": _mark(w.last_line), "findings": list(w.findings),
        } for w in d.workers],
        "processes": [{
            "rank": p.rank, "node_rank": p.node_rank, "local_rank": p.local_rank,
            "world_size": p.world_size, "stage": p.stage, "role": p.role, "failed": p.failed,
            "last_line": _mark(p.last_line),
        } for p in d.processes],
        "findings": [finding_record(f) for f in ordered(d)],
        "stuck": [{"node_rank": s.node_rank, "rank": s.rank} for s in d.stuck],
        "novel_lines": [{"file": n.file, "line": n.line, "text": n.text, "score": n.score, "why": n.why}
                        for n in d.novel_lines],
        "no_failure_seen": d.no_failure_seen,
        "harmless": [{"rule": n.rule, "meaning": n.meaning, "file": n.file, "line": n.line, "text": n.text,
                      "count": n.count, "reference": n.reference} for n in d.harmless],
        "expectations": [{"rule": e.rule, "asked": e.asked, "status": e.status, "why": e.why}
                         for e in d.expectations],
        "inputs": [{"path": n.path, "problem": n.problem} for n in d.inputs],
        "stats": {"files": d.files_scanned, "bytes": d.bytes_scanned, "lines": d.lines_scanned,
                  "skipped_files": len(d.skipped)},
    }


def render(d: Diagnosis, context: RenderContext) -> str:
    # ensure_ascii keeps every control or non-ASCII character of a log line escaped.
    document = json.dumps(diagnosis_record(d), indent=2, ensure_ascii=True)
    return no_legacy_commands_in_data(document, "\\u0023") + "\n"
