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


@pytest.mark.parametrize("due, said", [(" DUE TO JOB REQUEUE", "(job requeue)"), (" DUE TO TIME LIMIT", "(time limit)")])
@pytest.mark.parametrize("end", ["Exited with exit code 1", "Killed"])
def test_the_tasks_srun_reports_ending_after_slurms_cancel_are_its_consequence(run_cli, tmp_path, due, said, end):
    """Slurm cancelled the job, then srun reports its tasks' ends (srun's `%s: %s %s: %s`, built from
    its format string, launch.c _task_finish): the tasks ended because the job was stopped, so the
    stop stays the root cause, not a task that failed by itself."""
    srun = f"srun: error: gpu-node-3: tasks 2-3: {end}\n"
    job = sample_copy(tmp_path, "killed-silently", "worker-0/launch_ddp.log", None, SLURM.format(due=due) + srun)
    report = _report(run_cli, job)
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert said in report["root_cause"]["message"]


def test_a_task_srun_reports_failing_before_the_cancel_stays_a_failure(run_cli, tmp_path):
    srun = "srun: error: gpu-node-3: task 2: Exited with exit code 1\n"
    job = sample_copy(tmp_path, "killed-silently", "worker-0/launch_ddp.log", None,
                      srun + SLURM.format(due=" DUE TO TIME LIMIT"))
    report = _report(run_cli, job)
    assert report["root_cause"]["rule"] != "stopped-from-outside"


def test_the_reason_slurm_gives_on_any_of_its_cancel_lines_is_the_stops(run_cli, tmp_path):
    """srun tells the step's cancel without a reason, slurmstepd the job's with it (format strings as
    above): the stop is the preemption either way."""
    lines = ("srun: error: *** STEP 81234.0 CANCELLED AT 2026-12-01T03:00:00 ***\n"
             + SLURM.format(due=" DUE TO PREEMPTION"))
    job = sample_copy(tmp_path, "killed-silently", "worker-0/launch_ddp.log", None, lines)
    assert "(preemption)" in _report(run_cli, job)["root_cause"]["message"]
