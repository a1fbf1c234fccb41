"""A scheduler's own stop of the job is a stop from outside: Slurm's slurmstepd and srun print
`*** JOB|STEP <id> [ON <host>] CANCELLED AT <time> [DUE TO <reason>] ***` (their format strings,
src/slurmd/slurmstepd/req.c and srun) and send SIGTERM, then SIGKILL. The jobs are real samples
with that line appended (conftest.sample_copy), as Slurm's output lands in the same file."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, sample_copy

SLURM = "slurmstepd: error: *** JOB 81234 ON gpu-node-3 CANCELLED AT 2026-12-01T03:00:00{due} ***\n"


def _report(run_cli, job) -> dict:
    return json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


@pytest.mark.parametrize("due, said", [
    (" DUE TO TIME LIMIT", "(time limit)"),
    (" DUE TO PREEMPTION", "(preemption)"),
    ("", "(a cancel)"),
])
def test_a_job_slurm_stopped_mid_run_was_stopped_from_outside(run_cli, tmp_path, due, said):
    # killed-silently: one Worker whose log stops in the loop; here Slurm says why it stopped.
    job = sample_copy(tmp_path, "killed-silently", "worker-0/launch_ddp.log", None, SLURM.format(due=due))
    report = _report(run_cli, job)
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert f"stopped by its scheduler {said} after training had started" in report["root_cause"]["message"]


def test_a_crash_before_slurms_cancel_stays_the_root_cause(run_cli, tmp_path):
    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log", None,
                      SLURM.format(due=" DUE TO TIME LIMIT"))
    report = _report(run_cli, job)
    assert report["root_cause"]["rule"] == "crash-during-training"
    assert not any(f["rule"] == "stopped-from-outside" for f in report["findings"])
