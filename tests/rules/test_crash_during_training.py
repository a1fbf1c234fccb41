"""crash-during-training: A training process raised an exception after training had started."""

from __future__ import annotations

from conftest import SAMPLES
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests

RULE = "crash-during-training"
FIRES_ON = [
    "crash-mid-training",
    "crash-mid-training-torch1.13",
    "crash-mid-training-torch2.1",
    "crash-log-dir",
    "crash-log-not-collected",
    "crash-redirects-log-dir-torch1.13",
    "crash-tee-torch1.13",
    "masked-upload-sleep",
    "ddp-unused-parameters",
    "ddp-unused-parameters-debug",
    "collective-mismatch",
    "collective-mismatch-broadcast",
]
QUIET_ON = [
    "healthy-2x2",
    # it raised before the first batch: crash-before-first-batch
    "import-error-one-rank",
    # its ranks timed out in a collective: collective-timeout
    "stall-mid-training",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_a_traceback_that_lost_its_header_is_still_read(tmp_path):
    """Synthetic: the real crash-mid-training logs with every `Traceback (most recent call
    last):` line cut, as a pasted excerpt loses it; and a three-line paste of an OOM raised in
    the backward pass. The crash, its rank and its stage are still found."""
    for node in (0, 1):
        real = (SAMPLES / "crash-mid-training" / f"worker-{node}" / "launch_ddp.log").read_text()
        cut = "\n".join(l for l in real.splitlines() if "Traceback (most recent" not in l)
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text(cut + "\n")
    got = diagnose_paths([str(tmp_path)], Settings(job_status="failed"))
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
        "crash-during-training", 0, 1), got.summary()

    paste = tmp_path / "paste"
    paste.mkdir()
    (paste / "incident.log").write_text(
        "[rank3]:     loss.backward()\n"
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    got = diagnose_paths([str(paste)], Settings())
    stages = {f.rule for f in got.findings}
    assert "crash-during-training" in stages and "crash-before-first-batch" not in stages
