"""missing-worker-log: A node_rank in 0..nnodes-1 left no log, but every present Worker trained in
the whole world: the Worker ran and its log was not collected."""

from __future__ import annotations

import shutil

from rule_spec import real_sample_tests
from test_scale import _diagnose, _make_scale_logs  # jobs built by bench/make_scale_logs.py

RULE = "missing-worker-log"
FIRES_ON = [
    "crash-log-not-collected",
]
QUIET_ON = [
    "healthy-2x2",
    # the job never trained: the Worker did not start (missing-worker)
    "missing-worker",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_a_missing_log_of_a_job_that_trained_is_a_collection_gap_not_the_root(tmp_path):
    job = _make_scale_logs().build("workers", tmp_path / "gap", workers=8, lines=40, gpus=4)
    shutil.rmtree(job / "worker-2")
    d = _diagnose(job)
    assert (d.root_cause.rule, d.root_cause.node_rank, d.root_cause.rank) == ("crash-during-training", 6, 25)
    gap = [f for f in d.findings if f.rule == "missing-worker-log"]
    assert len(gap) == 1 and gap[0].severity == "warning" and gap[0].node_ranks == (2,)
    assert "not collected" in gap[0].message
    assert "missing-worker" not in {f.rule for f in d.findings}
    assert d.missing_node_ranks == (2,)


def test_a_world_smaller_than_the_launch_lines_is_no_collection_gap(tmp_path):
    # Elastic rendezvous can run without a node: WORLD_SIZE then says the world was smaller.
    job = _make_scale_logs().build("workers", tmp_path / "e", workers=3, lines=40, gpus=2, healthy=True)
    shutil.rmtree(job / "worker-2")
    for log in job.glob("worker-*/launch_ddp.log"):
        log.write_text(log.read_text().replace("WORLD_SIZE= 6", "WORLD_SIZE= 4"))
    d = _diagnose(job)
    rules = {f.rule for f in d.findings}
    assert "missing-worker" in rules and "missing-worker-log" not in rules
