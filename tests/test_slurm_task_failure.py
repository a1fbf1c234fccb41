"""Slurm's account of a step it cancelled because a task failed, read from srun's and slurmstepd's
own words. Lines are built from their format strings (no Slurm runs here):

- slurmstepd: `*** %s ON %s CANCELLED AT %s DUE TO TASK FAILURE ***` (`STEP <job>.<step>`, the
  node, the time), printed after `slurmstepd: error: ` or after its own `[time] error: ` header,
  as real pastes show it (desihub/desispec#2744; CSCS's OpenMPI notes: `srun: error: nid006549:
  task 0: Segmentation fault (core dumped)`, `... DUE TO TASK FAILURE ***`, `srun: error:
  nid006550: task 3: Terminated`, `srun: Force Terminated StepId=2243671.21`);
- srun, launch.c's _task_finish: `%s: %s %s: Exited with exit code %d` and `%s: %s %s: %s%s`
  (hosts, `task`/`tasks`, bit_fmt's ranges of task ids, strsignal's text), after `srun: error: `.

A paste holding them is a job of one file; where a real sample is used, Slurm's lines are
appended to it (conftest.sample_copy), as Slurm's output lands in the same file."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, sample_copy
from logscan.catalogue import load_catalogue
from logscan.scan.finders import compile_progress
from logscan.scan.lineparse import MAX_STEP_TASKS, parse_summary_line, srun_task_ids
from logscan.scan.prefixes import strip_prefixes

STEPD = "slurmstepd: error: *** STEP 12345.0 ON {host} CANCELLED AT 2024-03-01T10:00:00 DUE TO {why} ***\n"
STEPD_STAMPED = "[2024-03-01T10:00:00.809] error: *** STEP 12345.0 ON {host} CANCELLED AT 2024-03-01T10:00:00 DUE TO {why} ***\n"
SRUN = "srun: error: {host}: {task} {ids}: {end}\n"
FORCE = "srun: Force Terminated StepId=12345.0\n"


def _report(run_cli, job) -> dict:
    return json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


def _paste(tmp_path, text: str):
    (tmp_path / "paste.log").write_text(text)
    return tmp_path


@pytest.mark.parametrize("text, ids", [
    ("3", (3,)), ("0-57,59-63", (*range(58), *range(59, 64))), ("0,2-3", (0, 2, 3)), ("5,1", (1, 5)),
    ("0-", ()), ("5-3", ()), ("a", ()), ("[0-3]", ()), (f"0-{MAX_STEP_TASKS}", ()),
])
def test_srun_s_task_ids_are_its_ranges(text, ids):
    assert srun_task_ids(text) == ids


@pytest.mark.parametrize("task, ids, tasks", [("task", "58", (58,)), ("tasks", "0-2,4", (0, 1, 2, 4))])
def test_srun_s_report_of_a_task_end_names_its_host_and_tasks(task, ids, tasks):
    for end in ("Exited with exit code 1", "Terminated"):
        parsed = parse_summary_line(SRUN.format(host="gpu-node-7", task=task, ids=ids, end=end).rstrip("\n"))
        assert (parsed.host, parsed.tasks) == ("gpu-node-7", tasks)


@pytest.mark.parametrize("dress", [STEPD, STEPD_STAMPED])
def test_a_step_cancelled_for_a_task_s_failure_is_its_own_signal(dress):
    catalogue = load_catalogue()
    body = strip_prefixes(dress.format(host="gpu-node-1", why="TASK FAILURE").rstrip("\n")).body
    assert catalogue.signals["slurm-step-task-failure"].match(body) is not None
    assert catalogue.signals["death-signal-received"].match(body) is None  # no stop from outside
    for why in ("TIME LIMIT", "PREEMPTION"):
        other = strip_prefixes(dress.format(host="gpu-node-1", why=why).rstrip("\n")).body
        assert catalogue.signals["slurm-step-task-failure"].match(other) is None
        assert catalogue.signals["death-signal-received"].match(other) is not None


@pytest.mark.parametrize("line, progress", [
    (STEPD.format(host="gpu-node-1", why="TASK FAILURE"), False),
    (STEPD_STAMPED.format(host="gpu-node-1", why="TIME LIMIT"), False),
    ("slurmstepd: error: *** STEP 81234.batch ON gpu-node-3 CANCELLED AT 2026-12-01T03:00:00 ***\n", False),
    ("step 12/100 loss 0.5\n", True), ("Step 12. loss 0.5\n", True), ("global_step=12\n", True),
])
def test_a_slurm_step_id_is_no_training_step(line, progress):
    assert (compile_progress().search(line.encode()) is not None) is progress


@pytest.mark.parametrize("cancel", [STEPD, STEPD_STAMPED])
def test_the_task_srun_saw_fail_is_the_root_cause_and_the_terminated_ones_its_victims(run_cli, tmp_path, cancel):
    """The failing task's own exit (srun's `Exited with exit code 1`) is the root cause, named by
    its task and host; the tasks srun terminated after Slurm cancelled the step are its victims."""
    job = _paste(tmp_path, SRUN.format(host="gpu-node-7", task="task", ids="58", end="Exited with exit code 1")
                 + cancel.format(host="gpu-node-1", why="TASK FAILURE")
                 + SRUN.format(host="gpu-node-1", task="tasks", ids="0-57,59-63", end="Terminated") + FORCE)
    report = _report(run_cli, job)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["message"].startswith("Slurm task 58 on gpu-node-7 failed with exit code 1")
    (victims,) = [f for f in report["findings"] if "terminated by srun" in f["message"]]
    assert victims["message"].startswith("Slurm tasks 0-57, 59-63 were terminated by srun")
    assert not any(f["rule"] == "stopped-from-outside" for f in report["findings"])


@pytest.mark.parametrize("cancel", [STEPD, STEPD_STAMPED])
@pytest.mark.parametrize("terminated, named", [
    ([("gpu-node-1", "tasks", "0-57,59-63")], "task 58"),
    # one report per node, as srun prints them: the union is what srun stopped
    ([("nid006550", "task", "3"), ("nid006549", "task", "1"), ("nid006549", "task", "0")], "task 2"),
    ([("gpu-node-1", "tasks", "0,2-3,6-7")], "tasks 1, 4, 5"),
])
def test_the_task_srun_did_not_terminate_is_named_as_the_likely_first_failure(run_cli, tmp_path, cancel,
                                                                             terminated, named):
    """No line tells the failed task's end (srun prints it only once per exit code): the task inside
    the terminated tasks' span that srun did not have to stop is named, hedged, never certain."""
    stopped = "".join(SRUN.format(host=host, task=task, ids=ids, end="Terminated") for host, task, ids in terminated)
    job = _paste(tmp_path, cancel.format(host="gpu-node-1", why="TASK FAILURE") + stopped + FORCE)
    report = _report(run_cli, job)
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert root["message"].startswith(f"Slurm {named} likely failed first")
    assert "DUE TO TASK FAILURE" in root["evidence"][0]["text"]
    assert named in root["hint"]
    assert not any(f["rule"] == "stopped-from-outside" for f in report["findings"])


def test_a_task_past_the_terminated_span_is_not_guessed(run_cli, tmp_path):
    """Task 63 failed, srun terminated 0-62: nothing tells 63 from a task the step never had, so
    no task is named; Slurm's word still makes the job FAILED."""
    job = _paste(tmp_path, STEPD.format(host="gpu-node-1", why="TASK FAILURE")
                 + SRUN.format(host="gpu-node-1", task="tasks", ids="0-62", end="Terminated") + FORCE)
    report = _report(run_cli, job)
    assert report["verdict"] == "FAILED"
    assert "srun's lines do not say which task" in report["root_cause"]["message"]
    assert "likely" not in report["root_cause"]["message"]


def test_every_task_that_crashed_is_a_failure_and_the_first_one_leads(run_cli, tmp_path):
    """The shape of CSCS's paste: tasks 0 and 2 segfaulted, srun terminated 1 and 3."""
    job = _paste(tmp_path, SRUN.format(host="nid006549", task="task", ids="0", end="Segmentation fault (core dumped)")
                 + "srun: Terminating StepId=12345.0\n"
                 + STEPD_STAMPED.format(host="nid006549", why="TASK FAILURE")
                 + SRUN.format(host="nid006550", task="task", ids="2", end="Segmentation fault (core dumped)")
                 + SRUN.format(host="nid006550", task="task", ids="3", end="Terminated")
                 + SRUN.format(host="nid006549", task="task", ids="1", end="Terminated") + FORCE)
    report = _report(run_cli, job)
    assert report["root_cause"]["message"].startswith("Slurm tasks 0, 2 all were killed by SIGSEGV")
    assert any(f["message"].startswith("Slurm tasks 1, 3 were terminated by srun") for f in report["findings"])


@pytest.mark.parametrize("why, said", [("TIME LIMIT", "(time limit)"), ("PREEMPTION", "(preemption)")])
def test_a_step_stopped_from_outside_with_srun_s_terminated_tasks_stays_a_stop(run_cli, tmp_path, why, said):
    """Slurm's stop from outside, then srun's report of the tasks it ended: a stop, no task failure,
    and no claim that torchrun ran (Slurm's line is no trace of it)."""
    job = _paste(tmp_path, STEPD.format(host="gpu-node-3", why=why)
                 + SRUN.format(host="gpu-node-3", task="tasks", ids="0-3", end="Terminated"))
    report = _report(run_cli, job)
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert f"stopped by its scheduler {said} (no line shows whether training had started)" in \
        report["root_cause"]["message"]
    assert not any(f["rule"].startswith(("crash-", "hang-")) for f in report["findings"])


def test_slurm_s_lines_after_torchrun_s_own_report_add_no_failure(run_cli, tmp_path):
    """self-sigkill (real): torchrun on node 1 reports rank 2's SIGKILL. Slurm then cancels the
    step for that task failure and srun terminates the other node's task: still rank 2."""
    before = _report(run_cli, sample_copy(tmp_path / "a", "self-sigkill"))
    job = sample_copy(tmp_path / "b", "self-sigkill", "worker-1/launch_ddp.log", None,
                      SRUN.format(host="job-sk-worker-1", task="task", ids="1", end="Exited with exit code 1")
                      + STEPD.format(host="job-sk-worker-0", why="TASK FAILURE")
                      + SRUN.format(host="job-sk-worker-0", task="task", ids="0", end="Terminated") + FORCE)
    after = _report(run_cli, job)
    assert (after["root_cause"]["rule"], after["root_cause"]["node_rank"], after["root_cause"]["rank"]) == \
        (before["root_cause"]["rule"], 1, 2)
    assert not any("likely failed first" in f["message"] for f in after["findings"])
