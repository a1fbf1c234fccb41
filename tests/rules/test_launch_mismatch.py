"""launch-mismatch: Workers disagree on nnodes or master address/port, total_procs !=
nnodes*gpus_per_node, or there are more Worker logs than nnodes."""

from __future__ import annotations

from conftest import SAMPLES
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests, sample_lines, write

RULE = "launch-mismatch"
FIRES_ON = [
    "launch-mismatch",
]
QUIET_ON = [
    "healthy-2x2",
    # GPU counts that differ are gpu-count-mismatch's
    "gpu-count-mismatch",
    # fewer Worker logs than nnodes is missing-worker
    "missing-worker",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_a_stray_text_file_beside_the_logs_is_no_extra_worker(tmp_path):
    # healthy-2x2 copied, plus a notes file with no launch line and no torchrun output.
    for worker in ("worker-0", "worker-1"):
        write(tmp_path, f"{worker}/launch_ddp.log", b"".join(sample_lines("healthy-2x2", worker)))
    write(tmp_path, "notes.txt", b"lr sweep 3e-4, batch 32\nrerun after the data fix\n")
    d = diagnose_paths([str(tmp_path)], Settings())
    assert "launch-mismatch" not in {f.rule for f in d.findings}
    assert d.healthy


def test_a_hostile_launch_line_builds_nothing_per_claimed_node(tmp_path):
    """Synthetic: the real healthy-2x2 Worker 0 log with its launch line claiming 2,000,000,000
    Workers (and another with absurd GPUs): the claim is reported, not allocated."""
    real = (SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log").read_text()
    for field, value in (("nnodes=2 ", "nnodes=2000000000 "), ("gpus_per_node=2", "gpus_per_node=" + "9" * 5000)):
        (tmp_path / "launch_ddp.log").write_text(real.replace(field, value, 1))
        got = diagnose_paths([str(tmp_path)], Settings())
        root = got.root_cause
        assert root is not None and root.rule == "launch-mismatch" and "more than any job has" in root.message
