"""Prometheus metrics for node_exporter's textfile collector, in the exact text format (0.0.4),
written to a temporary file beside FILE and renamed over it, so the collector never reads half
a file. No job ids as labels: a label per job would grow without bound."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from logscan.vocabulary import Verdict

PREFIX = "logscan_sweep"


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items())) + "}"


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def render(jobs: Iterable[dict], stats: dict, shard: str | None = None) -> str:
    """The metrics, from every job's last diagnosis and this sweep's figures."""
    base = {"shard": shard} if shard else {}
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str, samples: list[tuple[dict, float]]) -> None:
        lines.append(f"# HELP {PREFIX}_{name} {help_text}")
        lines.append(f"# TYPE {PREFIX}_{name} {kind}")
        for labels, value in samples:
            lines.append(f"{PREFIX}_{name}{_labels({**base, **labels})} {_number(value)}")

    verdicts = {v: 0 for v in Verdict}
    rules: dict[str, int] = {}
    roots: dict[str, int] = {}
    for job in jobs:
        verdicts[job["verdict"]] = verdicts.get(job["verdict"], 0) + 1
        for finding in job.get("findings", []):
            rules[finding["rule"]] = rules.get(finding["rule"], 0) + 1
        if job.get("root_cause"):
            roots[job["root_cause"]["rule"]] = roots.get(job["root_cause"]["rule"], 0) + 1
    family("jobs", "gauge", "Jobs under the swept directories, by verdict.",
           [({"verdict": v}, n) for v, n in sorted(verdicts.items())])
    family("findings", "gauge", "Findings in the jobs' current diagnoses, by rule.",
           [({"rule": r}, n) for r, n in sorted(rules.items())])
    family("root_causes", "gauge", "Failed jobs by the rule of their root cause.",
           [({"rule": r}, n) for r, n in sorted(roots.items())])
    family("changes", "gauge", "Changes reported by the last sweep.",
           [({}, stats["changes"])])
    family("refreshed_jobs", "gauge", "Jobs re-diagnosed by the last sweep.",
           [({}, stats["refreshed"])])
    family("duration_seconds", "gauge", "How long the last sweep took.",
           [({}, round(stats["duration_seconds"], 6))])
    family("files_opened", "gauge", "Files the last sweep opened.", [({}, stats["files_opened"])])
    family("bytes_read", "gauge", "Bytes the last sweep read.", [({}, stats["bytes_read"])])
    family("last_run_timestamp_seconds", "gauge", "When the last sweep ended (Unix time).",
           [({}, round(stats["finished"], 3))])
    return "\n".join(lines) + "\n"


def write_atomically(path: Path, text: str) -> None:
    """Write beside the target, then rename over it."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
