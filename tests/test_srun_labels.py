"""srun --label puts each line's Slurm task id before it. Slurm's format strings: `%*d: ` (the id
padded with spaces to the width of the step's highest id, src/common/write_labelled_message.c's
_build_label), `%0*d: ` in older releases (padded with zeros), `P%u %*d: ` for a heterogeneous
job's component. The task id is the global rank where srun started the training processes itself,
and a node's index where it started a torchrun on each node.

Python logging's `%(process)d: ` looks the same unpadded: a padded number or 0 (no process has pid
0) is srun's; in a file holding one, an unpadded `N: ` is srun's too (a step of fewer than ten
tasks pads nothing); elsewhere it stays a pid (tests/test_interleaved_by_pid.py).

The logs here are synthetic: real samples' lines, dressed in srun's labels."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.catalogue import load_catalogue
from logscan.scan.prefixes import strip_prefixes
from logscan.scan.scanner import Scanner
from test_interleaved_by_pid import COLLATE_TRACEBACK, LOST_PEER_TRACEBACK, _traceback


@pytest.mark.parametrize("line, task, pid, rank", [
    ("0: RuntimeError: x", 0, None, None),
    (" 3: RuntimeError: x", 3, None, None),       # %*d, 10-99 tasks
    ("  7: RuntimeError: x", 7, None, None),      # %*d, 100-999 tasks
    ("03: RuntimeError: x", 3, None, None),       # %0*d
    ("000: RuntimeError: x", 0, None, None),
    ("P1  3: RuntimeError: x", 3, None, None),    # a heterogeneous job's component
    (" 3: [rank3]: RuntimeError: x", 3, None, 3),  # srun labelling torchrun's own prefixed lines
    ("12: RuntimeError: x", None, 12, None),      # unpadded: the file tells
    ("4242: RuntimeError: x", None, 4242, None),
])
def test_srun_s_label_is_a_task_and_a_bare_number_a_pid(line, task, pid, rank):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.task, stripped.pid, stripped.rank) == ("RuntimeError: x", task, pid, rank)


@pytest.mark.parametrize("line", ["07:21:00 step done", "0:00:01 elapsed", "  10:30 remaining", "1:2: x"])
def test_times_are_no_labels(line):
    stripped = strip_prefixes(line)
    assert (stripped.body, stripped.task, stripped.pid) == (line, None, None)


def _labelled(label: str, tasks=(1, 0)) -> str:
    """rank 1's collate error and rank 0's lost peer (collate-error, real), each line labelled by
    its task, interleaved line by line as srun's output of two tasks is."""
    first, second = _traceback(COLLATE_TRACEBACK), _traceback(LOST_PEER_TRACEBACK)
    out = []
    for i in range(max(len(first), len(second))):
        for task, lines in zip(tasks, (first, second)):
            if i < len(lines):
                out.append(label.format(task) + lines[i])
    return "\n".join(out) + "\n"


def _report(run_cli, path) -> dict:
    return json.loads(run_cli("scan", path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


@pytest.mark.parametrize("label", ["{}: ", "{:2d}: ", "{:02d}: ", "P0 {:3d}: "])
def test_srun_s_labels_name_the_rank_of_the_processes_it_started(run_cli, tmp_path, label):
    """srun started the two processes itself (no torchrun line anywhere): task 1's collate error is
    rank 1's, the real sample's diagnosis of it, cause and all."""
    (tmp_path / "slurm-1234.out").write_text(_labelled(label))
    root = _report(run_cli, tmp_path)["root_cause"]
    assert (root["rule"], root["rank"], root["cause"]) == ("crash-before-first-batch", 1, "collator")
    assert root["message"].startswith("rank 1 raised ValueError: expected sequence of length 14")


def test_unpadded_numbers_without_a_label_of_srun_s_stay_pids(tmp_path):
    """`1: ` and `3: ` with no `0: ` nor padding anywhere: nothing says srun wrote them."""
    log = tmp_path / "app.log"
    log.write_text(_labelled("{}: ", tasks=(1, 3)))
    scan = Scanner(load_catalogue()).scan_file(str(log), "app.log")
    assert scan.exceptions and all(e.where.task is None for e in scan.exceptions)


def test_in_a_labelled_file_an_unpadded_number_is_a_task(tmp_path):
    log = tmp_path / "slurm-1234.out"
    log.write_text(_labelled("{}: "))
    scan = Scanner(load_catalogue()).scan_file(str(log), "slurm-1234.out")
    assert {e.where.task for e in scan.exceptions} == {0, 1}


def test_srun_s_labels_on_torchrun_s_node_logs_name_no_rank(run_cli, tmp_path):
    """self-sigkill (real), each node's lines labelled by srun with the node's task (srun started a
    torchrun on each node, `srun --label torchrun ...`): the task is the node, not a rank, and the
    diagnosis is the real sample's."""
    job = tmp_path / "job"
    shutil.copytree(SAMPLES / "self-sigkill", job)
    for node in (0, 1):
        log = job / f"worker-{node}" / "launch_ddp.log"
        log.write_text("".join(f"{node}: {line}\n" for line in log.read_text().splitlines()))
    labelled, real = _report(run_cli, job), _report(run_cli, SAMPLES / "self-sigkill")
    assert [(f["rule"], f["node_rank"], f["rank"], f["cause"]) for f in [labelled["root_cause"], *labelled["findings"]]] \
        == [(f["rule"], f["node_rank"], f["rank"], f["cause"]) for f in [real["root_cause"], *real["findings"]]]
    assert labelled["root_cause"]["rank"] == 2


def test_srun_s_report_of_a_task_it_started_itself_is_that_rank_s_end(run_cli, tmp_path):
    """The labelled tracebacks above, then srun's and slurmstepd's lines (from their format
    strings, tests/test_slurm_task_failure.py): task 1's exit is rank 1's, told once, by its
    traceback; no Slurm task is named apart from it."""
    (tmp_path / "slurm-1234.out").write_text(
        _labelled("{}: ")
        + "srun: error: gpu-node-1: task 1: Exited with exit code 1\n"
        + "slurmstepd: error: *** STEP 12345.0 ON gpu-node-1 CANCELLED AT 2024-03-01T10:00:00 DUE TO TASK FAILURE ***\n"
        + "srun: error: gpu-node-1: task 0: Terminated\n")
    report = _report(run_cli, tmp_path)
    root = report["root_cause"]
    assert (root["rank"], root["cause"]) == (1, "collator")
    assert not any("Slurm task" in f["message"] for f in [root, *report["findings"]])
