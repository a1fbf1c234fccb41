"""Slurm's own reports of how a step's tasks ended. The lines are built from Slurm's format strings
(no Slurm runs here), and the jobs are real samples with those lines appended, as Slurm's output
lands in the same file (conftest.sample_copy):

- slurmstepd, task/cgroup's task_cgroup_memory_check_oom: `Detected %lu oom_kill event%s in %ps.
  Some of the step tasks have been OOM Killed.` (recent releases), `Detected %"PRIu64" oom-kill event(s)
  in %ps. Some of your processes may have been killed by the cgroup out-of-memory handler.` (before),
  `%ps` being `StepId=<job>.<step>`; signal cause-oom-kill, an out-of-memory cause;
- srun, launch's _task_finish: `%s: %s %s: Exited with exit code %d`, `%s: %s %s: %s%s` (strsignal's
  text, ` (core dumped)`) and `%s: %s %s: Out Of Memory` (hosts, `task`/`tasks`, ids), printed as
  `srun: error: ...`: the exit of a launcher, read as DeepSpeed's is (lineparse.SRUN_TASK_EXIT)."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, sample_copy
from logscan.catalogue import load_catalogue
from logscan.scan.lineparse import parse_summary_line
from logscan.scan.prefixes import strip_prefixes

OOM_NEW = "slurmstepd: error: Detected {n} oom_kill event{s} in StepId=81234.0. Some of the step tasks have been OOM Killed.\n"
OOM_OLD = ("slurmstepd: error: Detected {n} oom-kill event(s) in StepId=81234.batch. Some of your processes may "
           "have been killed by the cgroup out-of-memory handler.\n")
SRUN = "srun: error: {host}: {task} {ids}: {end}\n"


def _report(run_cli, job) -> dict:
    return json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


@pytest.mark.parametrize("line", [OOM_NEW.format(n=1, s=""), OOM_NEW.format(n=3, s="s"),
                                  OOM_OLD.format(n=1), OOM_OLD.format(n=2),
                                  SRUN.format(host="gpu-node-3", task="task", ids="0", end="Out Of Memory"),
                                  SRUN.format(host="gpu-node-[3-4]", task="tasks", ids="0-1", end="Out Of Memory")])
def test_every_slurm_oom_kill_report_is_an_out_of_memory_cause(line):
    catalogue = load_catalogue()
    signal = catalogue.signals["cause-oom-kill"]
    assert signal.match(strip_prefixes(line.rstrip("\n")).body) is not None
    assert signal.cause == "out-of-memory"


@pytest.mark.parametrize("end, code", [
    ("Exited with exit code 1", 1), ("Exited with exit code 137", 137),
    ("Killed", -9), ("Terminated", -15), ("Segmentation fault (core dumped)", -11), ("Bus error", -7),
    ("Aborted (core dumped)", -6), ("Out Of Memory", -9),
])
def test_srun_s_report_of_a_task_end_is_an_exit(end, code):
    for task, ids in (("task", "3"), ("tasks", "0-1,4")):
        parsed = parse_summary_line(SRUN.format(host="gpu-node-[3-4]", task=task, ids=ids, end=end).rstrip("\n"))
        assert (parsed.kind, parsed.value) == ("failed", (None, code))


@pytest.mark.parametrize("line", [
    "srun: error: Unable to allocate resources: Requested node configuration is not available",
    "srun: error: gpu-node-3: task 0: Frobnicated",
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
])
def test_other_srun_errors_are_not_exits(line):
    assert parse_summary_line(line) is None


@pytest.mark.parametrize("oom", [OOM_NEW.format(n=1, s=""), OOM_OLD.format(n=1)])
def test_a_task_srun_saw_oom_killed_is_a_crash_of_cause_out_of_memory(run_cli, tmp_path, oom):
    # killed-silently: one Worker whose log stops in the loop (its tree was SIGKILLed); here Slurm
    # says the step's cgroup OOM-killed it.
    job = sample_copy(tmp_path, "killed-silently", "worker-0/launch_ddp.log", None,
                      oom + SRUN.format(host="job-ks-worker-0", task="task", ids="0", end="Out Of Memory"))
    root = _report(run_cli, job)["root_cause"]
    assert root["rule"] == "crash-during-training"
    assert "was killed by SIGKILL" in root["message"]
    (finding,) = [f for f in _report(run_cli, job)["findings"] if f["rule"] == "crash-during-training"]
    assert finding["cause"] == "out-of-memory"


def test_a_task_killed_with_no_oom_report_has_no_cause(run_cli, tmp_path):
    job = sample_copy(tmp_path, "killed-silently", "worker-0/launch_ddp.log", None,
                      SRUN.format(host="job-ks-worker-0", task="task", ids="0", end="Killed"))
    (finding,) = [f for f in _report(run_cli, job)["findings"] if f["rule"] == "crash-during-training"]
    assert finding["cause"] is None
    assert "was killed by SIGKILL" in finding["message"]


def test_a_task_exit_code_srun_saw_is_a_crash(run_cli, tmp_path):
    job = sample_copy(tmp_path, "killed-silently", "worker-0/launch_ddp.log", None,
                      SRUN.format(host="job-ks-worker-0", task="task", ids="0", end="Exited with exit code 3"))
    root = _report(run_cli, job)["root_cause"]
    assert root["rule"] == "crash-during-training"
    assert "exit code 3" in root["message"]


def test_srun_telling_torchrun_s_own_end_adds_no_failure(run_cli, tmp_path):
    """self-sigkill: torchrun on node 1 reports rank 2's SIGKILL; srun then reports that node's task
    (its torchrun) exited 1, and slurmstepd that the cgroup OOM-killed it: still the one process."""
    before = _report(run_cli, sample_copy(tmp_path / "a", "self-sigkill"))
    job = sample_copy(tmp_path / "b", "self-sigkill", "worker-1/launch_ddp.log", None,
                      OOM_NEW.format(n=1, s="") + SRUN.format(host="job-sk-worker-1", task="task", ids="1",
                                                             end="Exited with exit code 1"))
    after = _report(run_cli, job)
    assert (after["root_cause"]["rule"], after["root_cause"]["node_rank"], after["root_cause"]["rank"]) == \
        (before["root_cause"]["rule"], 1, 2)
    assert sorted(f["rule"] for f in after["findings"]) == sorted(f["rule"] for f in before["findings"])


def test_srun_telling_a_torchrun_that_never_started_processes_ends_keeps_the_rendezvous_hang(run_cli, tmp_path):
    """missing-worker: both Workers' torchrun gave up in rendezvous; srun then reports each node's
    task (its torchrun) exited 1. No process ever ran: the Workers still hung in rendezvous."""
    job = sample_copy(tmp_path, "missing-worker")
    for node in (0, 1):
        path = job / f"worker-{node}" / "launch_ddp.log"
        path.write_text(path.read_text() + SRUN.format(host=f"job-mw-worker-{node}", task="task", ids=str(node),
                                                       end="Exited with exit code 1"))
    report = _report(run_cli, job)
    assert report["root_cause"]["rule"] == "missing-worker"
    rules = [f["rule"] for f in report["findings"]]
    assert rules.count("hang-in-rendezvous") == 2
    assert not any(rule.startswith("crash-") for rule in rules)
    assert {w["stage"] for w in report["workers"]} == {"rendezvous"}


@pytest.mark.parametrize("lines, verb", [
    ("a training script's own output\n" + SRUN.format(host="gpu-node-3", task="tasks", ids="10-11",
                                                      end="Exited with exit code 1"), "failed with exit code 1"),
    (SRUN.format(host="gpu-node-3", task="task", ids="2", end="Segmentation fault (core dumped)"), "SIGSEGV"),
    (SRUN.format(host="gpu-node-[3-4]", task="tasks", ids="0-1,4", end="Exited with exit code 3"), "exit code 3"),
])
def test_a_paste_of_srun_s_task_report_alone_is_a_failure(run_cli, tmp_path, lines, verb):
    """A paste holding only srun's report of a task's end (synthetic lines, from its format string):
    srun's `error:` line is no trace of torchrun, so the exit is not taken for srun telling the end
    of a torchrun that never started a process. The task failed, whatever it ran."""
    (tmp_path / "paste.log").write_text(lines)
    report = _report(run_cli, tmp_path)
    assert report["verdict"] == "FAILED"
    assert verb in report["root_cause"]["message"]


@pytest.mark.parametrize("oom", [OOM_NEW.format(n=1, s=""), OOM_OLD.format(n=1)])
def test_slurms_oom_kill_report_pasted_alone_is_the_kill_not_a_cancel(run_cli, tmp_path, oom):
    """slurmstepd's OOM report, srun's task end, then the step's cancel (Slurm's words, as above): the
    scheduler's lines are no trace of torchrun, so srun's end of the task is the failure and the cancel
    after it its consequence."""
    (tmp_path / "slurm.out").write_text(
        oom + SRUN.format(host="gpu20-15", task="task", ids="0", end="Out Of Memory")
        + "srun: launch/slurm: _step_signal: Terminating StepId=81234.0\n"
        "slurmstepd: error: *** STEP 81234.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***\n")
    root = _report(run_cli, tmp_path)["root_cause"]
    assert root["rule"] != "stopped-from-outside"
    assert root["cause"] == "out-of-memory"
    assert "task 0" in root["message"]
