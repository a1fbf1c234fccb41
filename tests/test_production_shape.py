"""The shipped samples in production shape: the lines only some scripts print are never required.

Every real healthy sample is rewritten here without the guide's temporary `torchrun env:` print
(every copy of it, and the pieces an interleaved print leaves), then also without the launch
script's `DDP launch:` line, each with and without the platform's status. These are derived
inputs, not real logs: the real production-shape runs are the `*-prod*` samples, judged by
tests/test_samples.py. A healthy job stays HEALTHY whatever of those lines it lacks.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, healthy_samples
from logscan.config import parse_time
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings

# The env print, repeated or cut by an interleaving (`torchrun env:torchrun env: RANK= 0 ...`).
ENV_PRINT = re.compile(rb"(?:torchrun env:)+|\s?RANK=\s*\S+\s*LOCAL_RANK=\s*\S+\s*WORLD_SIZE=\s*\S+")
LAUNCH_LINE = re.compile(rb"^(?:\S+ )?DDP launch:[^\n]*\n", re.MULTILINE)
# A line an env print leaves empty, or with only a collector's or --tee's prefix on it.
EMPTIED = re.compile(rb"^(?:\S+Z |\[default\d+\]:)?\s*\n", re.MULTILINE)

VARIANTS = {
    "no-env-print": (True, False, True),
    "no-env-print-no-launch-line": (True, True, True),
    "no-env-print-no-status": (True, False, False),
    "no-env-print-no-launch-line-no-status": (True, True, False),
}


def _without(data: bytes, launch: bool) -> bytes:
    data = ENV_PRINT.sub(b"", data)
    if launch:
        data = LAUNCH_LINE.sub(b"", data)
    return EMPTIED.sub(b"", data)


def production_copy(sample: Path, into: Path, launch: bool, status: bool) -> Path:
    """The sample's files with the optional lines removed (inside gzip too); container logs, whose
    records are JSON, are copied as they are."""
    job = into / sample.name
    shutil.copytree(sample, job, ignore=shutil.ignore_patterns("expected.json"))
    if not status:
        (job / "job_status").unlink(missing_ok=True)
    for path in job.rglob("*"):
        if not path.is_file() or path.name == "job_status" or path.suffix == ".pt":
            continue
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            path.write_bytes(gzip.compress(_without(gzip.decompress(raw), launch), mtime=0))
        elif not raw.lstrip().startswith(b"{") and not re.match(rb"\S+Z (?:stdout|stderr) [FP] ", raw):
            path.write_bytes(_without(raw, launch))
    return job


def _cases():
    for sample in healthy_samples():
        for name, (_, launch, status) in VARIANTS.items():
            yield pytest.param(sample, launch, status, id=f"{sample.name}-{name}")


@pytest.mark.parametrize("sample, launch, status", list(_cases()))
def test_a_healthy_job_without_the_optional_lines_stays_healthy(tmp_path, sample, launch, status):
    job = production_copy(sample, tmp_path, launch, status)
    got = diagnose_paths([str(job)], Settings(now=parse_time(POST_MORTEM_NOW)))
    report = "\n".join(f"{f.rule} {f.node_rank}/{f.rank}: {f.message}" for f in got.findings)
    assert got.verdict == "HEALTHY", f"{got.verdict_reason}\n{report}"
    assert not [f for f in got.findings if f.severity == "error"], report


def test_the_rewrite_removes_what_it_says(tmp_path):
    """The derived input really lacks the lines: an interleaved env print leaves nothing behind."""
    sample = next(s for s in healthy_samples() if s.name == "healthy-2x2")
    job = production_copy(sample, tmp_path, launch=True, status=False)
    text = b"".join(p.read_bytes() for p in job.rglob("launch_ddp.log"))
    assert b"torchrun env" not in text and b"RANK=" not in text and b"DDP launch:" not in text
    assert b"training finished" in text and not (job / "job_status").exists()
