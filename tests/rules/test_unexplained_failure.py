"""unexplained-failure: The platform says the job failed and no rule explains why: the lines that
look like errors are cited."""

from __future__ import annotations

from conftest import SAMPLES
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests

RULE = "unexplained-failure"
FIRES_ON = [
    "banner-only-killed",
]
QUIET_ON = [
    "healthy-2x2",
    # the kill is explained: worker-killed
    "self-sigkill",
    # the crash explains the failure
    "crash-mid-training",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def _cut_healthy_run_with(tmp_path, damaged: str):
    for node in (0, 1):
        lines = (SAMPLES / "healthy-2x2" / f"worker-{node}" / "launch_ddp.log").read_text().splitlines()[:12]
        if node == 0:
            lines.append(damaged)
        (tmp_path / f"worker-{node}").mkdir(exist_ok=True)
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text("\n".join(lines) + "\n")


def test_a_damaged_failure_line_keeps_a_trained_job_from_healthy(tmp_path):
    """Synthetic: the real healthy-2x2 logs cut after their first steps, and on node 0 a torchrun
    failure line damaged mid-way (a bracket lost). No rule explains it, so the verdict is not HEALTHY."""
    _cut_healthy_run_with(tmp_path, "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9 "
                                    "local_rank: 0 (pid")
    got = diagnose_paths([str(tmp_path)], Settings())
    assert got.verdict == "INCONCLUSIVE" and "exitcode: -9" in got.verdict_reason
    failed = diagnose_paths([str(tmp_path)], Settings(job_status="failed"))
    assert failed.verdict == "FAILED" and failed.root_cause.rule == "unexplained-failure"


def test_a_failure_line_cut_after_its_exit_code_tells_the_failure(tmp_path):
    """The same line cut after `failed (exitcode: -9)`: a process of node 0 was killed, whatever its rank."""
    _cut_healthy_run_with(tmp_path, "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank")
    got = diagnose_paths([str(tmp_path)], Settings())
    assert got.verdict == "FAILED" and got.root_cause.rule != "unexplained-failure"
    assert "SIGKILL" in got.root_cause.message
