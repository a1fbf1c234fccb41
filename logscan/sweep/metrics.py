"""Prometheus metrics for node_exporter's textfile collector, in the text format as
prometheus_client writes it, to a temporary file beside FILE renamed over it, so the collector
never reads half a file (logscan.output_files; prometheus_client's own write_to_textfile opens
a predictable temporary name, following whatever link is planted there).
No job ids as labels: a label per job would grow without bound.

`findings` counts findings (a job with two of a rule counts 2); `root_causes` and `jobs` count
jobs, as does the fleet view (`--summary`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from logscan.output_files import replace_text
from logscan.vocabulary import Verdict

PREFIX = "logscan_sweep"


class _Figures:
    """A prometheus_client collector of one sweep's figures, read once."""

    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


def families(jobs: Iterable[dict], report, finished: float, shard: str | None = None) -> list:
    """The metric families, from every job's last diagnosis and this sweep's report."""
    from prometheus_client.core import GaugeMetricFamily

    base = {"shard": shard} if shard else {}
    verdicts = {v: 0 for v in Verdict}
    rules: dict[str, int] = {}
    roots: dict[str, int] = {}
    for job in jobs:
        verdicts[job["verdict"]] = verdicts.get(job["verdict"], 0) + 1
        for finding in job.get("findings", []):
            rules[finding["rule"]] = rules.get(finding["rule"], 0) + 1
        if job.get("root_cause"):
            roots[job["root_cause"]["rule"]] = roots.get(job["root_cause"]["rule"], 0) + 1

    def gauge(name: str, help_text: str, samples: list[tuple[dict, float]]):
        labels = sorted({*base, *(k for sample, _ in samples for k in sample)})
        family = GaugeMetricFamily(f"{PREFIX}_{name}", help_text, labels=labels)
        for sample, value in samples:
            values = {**base, **sample}
            family.add_metric([values[k] for k in labels], value)
        return family

    return [
        gauge("jobs", "Jobs under the swept directories, by verdict.",
              [({"verdict": v}, n) for v, n in sorted(verdicts.items())]),
        gauge("findings", "Findings (not jobs) in the jobs' current diagnoses, by rule: a job "
                          "with two findings of a rule counts 2.",
              [({"rule": r}, n) for r, n in sorted(rules.items())]),
        gauge("root_causes", "Failed jobs by the rule of their root cause.",
              [({"rule": r}, n) for r, n in sorted(roots.items())]),
        gauge("changes", "Changes reported by the last sweep.", [({}, report.changes)]),
        gauge("refreshed_jobs", "Jobs re-diagnosed by the last sweep.", [({}, report.refreshed)]),
        gauge("duration_seconds", "How long the last sweep took.", [({}, round(report.duration, 6))]),
        gauge("files_opened", "Files the last sweep opened.", [({}, report.counters.files_opened)]),
        gauge("bytes_read", "Bytes the last sweep read.", [({}, report.counters.bytes_read)]),
        gauge("last_run_timestamp_seconds", "When the last sweep ended (Unix time).",
              [({}, round(finished, 3))]),
    ]


def render(jobs: Iterable[dict], report, finished: float, shard: str | None = None) -> str:
    """The metrics in the text exposition format."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Figures(families(jobs, report, finished, shard)))
    return generate_latest(registry).decode("utf-8")


def write_metrics(path: Path, jobs: Iterable[dict], report, finished: float,
                  shard: str | None = None) -> None:
    replace_text(path, render(jobs, report, finished, shard))
