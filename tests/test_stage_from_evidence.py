"""A Worker's stage and the job's "reached the first batch" come from the evidence the root cause
reads (logscan.model.training): a progress line, a collective numbered past start-up, and each
process's own warning of a training step or failure placed in training. Real samples
crash-training-silent (every process printed DDP's first-forward warning, no progress line) and
crash-first-batch-silent (rank 1 crashed before its first forward, the others got to backward);
the synthetic variants are copies with lines removed or added, and say so."""

from __future__ import annotations

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, sample_copy
from logscan.config import parse_time
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from logscan.vocabulary import RunStage

FIND_UNUSED = "find_unused_parameters=True was specified"


def _diagnose(job):
    return diagnose_paths([str(job)], Settings(now=parse_time(POST_MORTEM_NOW)))


def _stages(got) -> dict:
    return {w.node_rank: w.stage for w in got.workers}


@pytest.mark.parametrize("sample", ["crash-training-silent", "crash-training-silent-torch2.0"])
def test_workers_whose_processes_all_warned_in_a_training_step_are_training(sample):
    """torch 2.13 prefixes the warning with its rank; torch 2.0 does not, and one warning per
    process places each of them."""
    got = _diagnose(SAMPLES / sample)
    assert "after training had started" in got.root_cause.message
    assert _stages(got) == {0: RunStage.TRAINING, 1: RunStage.TRAINING}
    assert got.reached_first_batch
    assert all(w.reached_first_batch for w in got.workers)
    # the timeline's first-batch mark sits on the first warning: no progress line exists
    for worker in got.workers:
        (first_batch,) = [m for m in worker.stages if m.stage == "first batch"]
        assert FIND_UNUSED in first_batch.text


def test_a_worker_with_a_process_that_never_got_its_first_batch_stays_in_init():
    """Rank 1 (node 0) raised before its first forward; ranks 2 and 3 (node 1) warned and died in
    backward: node 1 trained, node 0 did not all get there, and the job did not reach it."""
    got = _diagnose(SAMPLES / "crash-first-batch-silent")
    assert got.root_cause.rule == "crash-before-first-batch"
    assert _stages(got) == {0: RunStage.INIT, 1: RunStage.TRAINING}
    assert not got.reached_first_batch


def test_without_the_warnings_a_silent_job_is_in_init(tmp_path):
    """Synthetic: crash-training-silent with every warning line of node 1 removed, and node 1's
    processes' tracebacks kept (they go through loss.backward(): still training)."""
    log = SAMPLES / "crash-training-silent" / "worker-1" / "launch_ddp.log"
    warnings = [line for line in log.read_text().splitlines(keepends=True) if FIND_UNUSED in line]
    assert len(warnings) == 2
    job = sample_copy(tmp_path, "crash-training-silent")
    path = job / "worker-1" / "launch_ddp.log"
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                            if FIND_UNUSED not in line))
    got = _diagnose(job)
    # their backward frames still place each of node 1's processes in training
    assert _stages(got)[1] == RunStage.TRAINING


def test_a_worker_with_only_env_prints_and_no_evidence_is_in_init(tmp_path):
    """Synthetic: crash-training-silent with node 1's log cut after its env prints, and node 0's
    warnings removed: nothing places any process in training."""
    job = sample_copy(tmp_path, "crash-training-silent")
    for node in (0, 1):
        path = job / f"worker-{node}" / "launch_ddp.log"
        lines = path.read_text().splitlines(keepends=True)
        keep = [line for line in lines if FIND_UNUSED not in line]
        path.write_text("".join(keep[:7] if node == 1 else keep))
    got = _diagnose(job)
    assert _stages(got)[1] == RunStage.INIT
    assert not got.reached_first_batch


def test_a_crash_after_the_frameworks_training_loop_ended_is_after_training_started(run_cli, tmp_path):
    """Lightning's `Trainer.fit` stopped line (fit_loop.py's format string), then an exception: training had
    run, though no step line is in view (synthetic lines)."""
    from conftest import paste_report
    text = ("`Trainer.fit` stopped: `max_steps=100` reached.\n"
            "Traceback (most recent call last):\n  File \"train.py\", line 80, in <module>\n    trainer.test(model)\n"
            "lightning.fabric.utilities.exceptions.MisconfigurationException: No `test_dataloader()` method defined\n")
    assert paste_report(run_cli, tmp_path, text)["root_cause"]["rule"] == "crash-during-training"
