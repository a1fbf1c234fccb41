"""JSON schema v1: one object, sorted and deterministic."""

from __future__ import annotations

import json

from logscan.diagnosis import Diagnosis, Finding
from logscan.render.inert import no_legacy_commands_in_data

SCHEMA_VERSION = 1


def finding_record(f: Finding) -> dict:
    return {
        "rule": f.rule,
        "severity": f.severity,
        "message": f.message,
        "hint": f.hint,
        "node_rank": f.node_rank,
        "rank": f.rank,
        "node_ranks": list(f.node_ranks),
        "ranks": list(f.ranks),
        "worker": f.worker,
        "stage": f.stage,
        "cause": f.cause,
        "caused_by": f.caused_by,
        "cascade": f.cascade,
        "time": f.time,
        "key": f.key,
        "evidence": [{"file": e.file, "line": e.line, "text": e.text} for e in f.evidence],
    }


def diagnosis_record(d: Diagnosis) -> dict:
    root = d.root_cause
    return {
        "schema_version": SCHEMA_VERSION,
        "job": d.job,
        "verdict": d.verdict,
        "verdict_reason": d.verdict_reason,
        "healthy": d.healthy,
        "summary": d.summary(),
        "job_status": d.job_status,
        "config_file": d.config_file,
        "root_cause": None if root is None else {
            "rule": root.rule, "node_rank": root.node_rank, "rank": root.rank,
            "message": root.message},
        "first_failure": None if d.first_failure is None else {
            "node_rank": d.first_failure.node_rank, "rank": d.first_failure.rank},
        "reached_first_batch": d.reached_first_batch,
        "missing_node_ranks": list(d.missing_node_ranks),
        "missing_ranks": list(d.missing_ranks),
        "workers": [{
            "node_rank": w.node_rank, "label": w.label, "host": w.host, "files": list(w.files),
            "nnodes": w.nnodes, "gpus_per_node": w.gpus_per_node, "total_procs": w.total_procs,
            "master": w.master, "ranks": list(w.ranks), "reached_first_batch": w.reached_first_batch,
            "stage": w.stage, "last_activity": w.last_activity,
        } for w in d.workers],
        "processes": [{
            "rank": p.rank, "node_rank": p.node_rank, "local_rank": p.local_rank,
            "world_size": p.world_size, "stage": p.stage, "failed": p.failed, "cascade": p.cascade,
        } for p in d.processes],
        "findings": [finding_record(f) for f in d.findings],
        "novel_lines": [{"file": n.file, "line": n.line, "text": n.text, "score": n.score, "why": n.why}
                        for n in d.novel_lines],
        "no_failure_seen": d.no_failure_seen,
        "harmless": [{"rule": n.rule, "meaning": n.meaning, "file": n.file, "line": n.line, "text": n.text,
                      "count": n.count, "reference": n.reference} for n in d.harmless],
        "inputs": [{"path": n.path, "problem": n.problem} for n in d.inputs],
        "stats": {"files": d.files_scanned, "bytes": d.bytes_scanned, "lines": d.lines_scanned,
                  "skipped_files": len(d.skipped)},
    }


def render_json(d: Diagnosis, **_) -> str:
    # ensure_ascii keeps every control or non-ASCII character of a log line escaped.
    document = json.dumps(diagnosis_record(d), indent=2, ensure_ascii=True)
    return no_legacy_commands_in_data(document, "\\u0023") + "\n"
