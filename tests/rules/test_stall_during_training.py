"""stall-during-training: Training went on, then every log went quiet while the job was not over:
a rank stalled and the others wait for it.

Its samples are snapshots of real jobs still running (production shape: no env print, progress
from rank 0 only), copied 45 s after launch: rank 1 stopped at step 8 while the others waited in
the gradient allreduce with a 10 min timeout.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import SAMPLES
from logscan.config import parse_time
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests

RULE = "stall-during-training"
FIRES_ON = [
    "stall-still-running-prod",
    "stall-still-running-prod-plain",
]
QUIET_ON = [
    "healthy-2x2-prod",
    # the platform ended the stall: the stop is its ending, hang-ended-from-outside tells it
    "platform-walltime-stall-prod",
    # a collective timed out: collective-timeout tells it
    "stall-mid-training-prod",
    # still before the first batch: hang-before-first-batch
    "hang-still-running-prod",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def _at(sample: str, now: str, **settings):
    return diagnose_paths([str(SAMPLES / sample)], Settings(now=parse_time(now), **settings))


def test_names_the_straggler_by_its_own_last_line():
    got = _at("stall-still-running-prod", "2030-01-01T00:00:00Z")
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (RULE, 0, 1)
    root = next(f for f in got.findings if f.rule == RULE)
    assert "reloading shard list" in root.evidence[0].text


@pytest.mark.parametrize("minutes_after, stalled", [(6, False), (12, True)])
def test_timed_lines_give_the_jobs_own_rhythm(minutes_after, stalled):
    """Steps 0.1 s apart: a hundred of them is 10 s, so the 10 min floor decides, long before
    --stall-after's 30 min. The last line is at 11:48:48 (its kubectl timestamp)."""
    got = _at("stall-still-running-prod", f"2026-12-02T{11 + (48 + minutes_after) // 60:02d}:"
                                          f"{(48 + minutes_after) % 60:02d}:49Z")
    assert (RULE in {f.rule for f in got.findings}) is stalled
    assert got.verdict == ("FAILED" if stalled else "RUNNING")


def test_untimed_lines_wait_for_stall_after(tmp_path):
    """No times on the lines: only the file's mtime tells how long the job has been quiet."""
    job = tmp_path / "job"
    shutil.copytree(SAMPLES / "stall-still-running-prod-plain", job)
    mtime = max(p.stat().st_mtime for p in job.rglob("launch_ddp.log"))
    from datetime import datetime, timedelta, timezone

    later = datetime.fromtimestamp(mtime, timezone.utc) + timedelta(minutes=5)
    quiet = diagnose_paths([str(job)], Settings(now=later))
    assert RULE not in {f.rule for f in quiet.findings}
    stalled = diagnose_paths([str(job)], Settings(now=later, stall_after=timedelta(minutes=2)))
    assert RULE in {f.rule for f in stalled.findings}


def test_a_finished_run_is_not_a_stall():
    got = _at("healthy-timestamps-prod", "2030-01-01T00:00:00Z")
    assert RULE not in {f.rule for f in got.findings}
    assert got.verdict == "HEALTHY"
