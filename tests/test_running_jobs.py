"""A job read while it runs: what the verdict is depends on when the lines are read. Real samples
copied while their jobs ran (the platform saying running), each read at a moment after its last
line, as a cron sweep or `logscan watch` would read it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from conftest import SAMPLES
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from logscan.vocabulary import Severity, Verdict


def _read_at(sample: str, seconds_after_last_line: float, **settings):
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(SAMPLES)
        first = diagnose_paths([sample], Settings())
        last = max(w.last_activity for w in first.workers if w.last_activity is not None)
        return diagnose_paths([sample], Settings(now=last + timedelta(seconds=seconds_after_last_line),
                                                 **settings))


@pytest.mark.parametrize("seconds", [2, 20])
def test_a_job_training_normally_is_running_with_no_finding(seconds):
    """running-mid-training-prod: steps 0.5 s apart, copied while it trained."""
    got = _read_at("running-mid-training-prod", seconds)
    assert got.verdict == Verdict.RUNNING, got.verdict_reason
    assert not [f for f in got.findings if f.severity == Severity.ERROR]


def test_the_same_lines_read_long_after_with_the_platform_saying_running_are_a_stall():
    got = _read_at("running-mid-training-prod", 3600)
    assert got.verdict == Verdict.FAILED
    assert got.root_cause.rule == "stall-during-training"


def test_a_stall_copied_while_running_is_told_once_its_silence_outlasts_the_rhythm():
    """stall-still-running-prod: steps 0.1 s apart, then rank 1 stopped; with --stall-after 60s
    the stall is a finding a minute and a half after its last line, and not a few seconds after."""
    early = _read_at("stall-still-running-prod", 5, stall_after=timedelta(seconds=60))
    assert early.verdict == Verdict.RUNNING, early.verdict_reason
    late = _read_at("stall-still-running-prod", 90, stall_after=timedelta(seconds=60))
    assert late.root_cause is not None and late.root_cause.rule == "stall-during-training"
