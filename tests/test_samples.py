"""Every real sample job gets the diagnosis its expected.json states."""

from __future__ import annotations

from functools import cache

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, expected, healthy_samples, sample_dirs
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from logscan.config import parse_time

UNEXPLAINED_CAUSE = "other"  # logscan.model.failures: a crash that no cause signal explains


@cache
def diagnose(sample):
    """A sample diagnosed as `cd sample_logs && logscan scan NAME` would: paths are shown as
    typed, so reports show `healthy-2x2/worker-0/launch_ddp.log` wherever the checkout lives.
    Once per test process: the diagnosis is immutable, and several test modules read each sample's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(SAMPLES)
        return diagnose_paths([sample.name], Settings(now=parse_time(POST_MORTEM_NOW)))


def _judged_samples(samples=None):
    """Every sample (or those given); one whose expected.json names a known gap (a diagnosis logscan
    does not give yet) is an expected failure, strict: the day it passes, the gap note must go."""
    for sample in sample_dirs() if samples is None else samples:
        gap = expected(sample)["expect"].get("known_gap")
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
        yield pytest.param(sample, marks=marks, id=sample.name)


@pytest.mark.parametrize("sample", list(_judged_samples()))
def test_sample_diagnosis(sample):
    want = expected(sample)["expect"]
    got = diagnose(sample)
    assert got.verdict == want["verdict"], got.verdict_reason
    fired = {f.rule for f in got.findings}
    report = "\n".join(f"{f.severity} {f.rule} {f.node_rank}/{f.rank}: {f.message}" for f in got.findings)
    assert got.healthy == want["healthy"], report
    missing = set(want["rules"]) - fired
    assert not missing, f"expected rules did not fire: {missing}\n{report}"
    if want.get("root_cause"):
        root = want["root_cause"]
        assert got.root_cause is not None, report
        assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
            root["rule"], root["node_rank"], root["rank"]), report
        # The crash cause class is the root finding's, which is one of the findings. A sample
        # that declares none has none, or the class of a crash no cause signal explains.
        (root_finding,) = [f for f in got.findings if f.is_root]
        assert root_finding is got.root_cause
        if "cause" in root:
            assert root_finding.cause == root["cause"], report
        else:
            assert root_finding.cause in (None, UNEXPLAINED_CAUSE), report
    else:
        assert got.root_cause is None, report
    if want.get("first_failure"):
        first = want["first_failure"]
        assert got.first_failure is not None
        assert (got.first_failure.node_rank, got.first_failure.rank) == (
            first["node_rank"], first["rank"]), report


@pytest.mark.parametrize("sample", list(_judged_samples(healthy_samples())))
def test_healthy_samples_have_no_error(sample):
    got = diagnose(sample)
    assert not [f for f in got.findings if f.severity == "error"]
    assert got.reached_first_batch


def test_every_finding_rule_fires_on_some_real_sample():
    from logscan.catalogue import load_catalogue

    # These need hardware this suite's samples cannot come from (CPU-only torch, gloo), or a
    # scheduler or remote shell between nodes (loopback Workers started by one script).
    no_real_sample = {"cuda-out-of-memory", "nccl-error", "nccl-rank-out-of-range", "nccl-watchdog-abort",
                      "node-not-started"}
    fired = {f.rule for sample in sample_dirs() for f in diagnose(sample).findings}
    # Lint rules read launch scripts (tests/test_lint.py), expectations what a gate asked for.
    rules = {r.id for r in load_catalogue().rules.values()
             if r.kind != "lint" and r.role != "expectation"}
    assert rules - fired - no_real_sample == set()
    assert no_real_sample <= rules
