"""missing-worker: A node_rank in 0..nnodes-1 has no `DDP launch:` line in any Worker log."""

from __future__ import annotations

from rule_spec import real_sample_tests
from test_scale import _diagnose, _make_scale_logs  # jobs built by bench/make_scale_logs.py

RULE = "missing-worker"
FIRES_ON = [
    "missing-worker",
    "missing-worker-torch1.13",
    "missing-worker-torch2.1",
    "launch-env-missing",
    "duplicate-node-rank",
    "duplicate-node-rank-zero",
]
QUIET_ON = [
    "healthy-2x2",
    # every present Worker trained in the whole world: its log was not collected
    # (missing-worker-log)
    "crash-log-not-collected",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_a_missing_worker_of_a_job_that_never_trained_is_still_the_root(tmp_path):
    job = _make_scale_logs().build("rendezvous", tmp_path / "r", workers=2, gpus=2)
    d = _diagnose(job)
    assert d.root_cause.rule == "missing-worker"
    assert "missing-worker-log" not in {f.rule for f in d.findings}
