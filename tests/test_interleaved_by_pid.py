"""Tracebacks of several processes interleaved line by line in one log are each assembled from
their own process's lines when every line names its process: a `[rank3]:` or `[default3]:`
prefix, or a pid (Python logging's `%(process)d` as `[pid 1234] ` or `1234: `, torch's formatter
header from 2.5 on, a launcher's `(pid=1234)`).

The interleavings are synthetic: two real tracebacks of sample_logs/collate-error (rank 1's
DataLoader collate error, rank 0's lost peer in backward), their `[rankN]:` prefixes swapped
for a pid in each dress, merged one line of each in turn.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.catalogue import load_catalogue
from logscan.scan.prefixes import strip_prefixes
from logscan.scan.scanner import Scanner

COLLATE_LOG = SAMPLES / "collate-error" / "worker-0" / "launch_ddp.log"
# (first line, last line) of each traceback in that log, 1-based
COLLATE_TRACEBACK, LOST_PEER_TRACEBACK = (8, 34), (36, 48)
# The processes' real pids, as torchrun's lines in that log give them: `failed (exitcode: 1)
# local_rank: 1 (pid: 22190)` and `Sending process 22188 closing signal SIGTERM`
RANK1_PID, RANK0_PID = 22190, 22188

DRESSES = {
    "logging [pid N]": "[pid {pid}] ",
    "logging N:": "{pid}: ",
    "torch 2.5+ header": "E1129 19:27:52.640000 {pid} torch/distributed/elastic/agent/server/api.py:10] ",
    "ray": "(RayTrainWorker pid={pid}, ip=10.0.0.2) ",
}


def _traceback(span: tuple[int, int]) -> list[str]:
    lines = COLLATE_LOG.read_text().splitlines()[span[0] - 1:span[1]]
    assert lines[0].endswith("Traceback (most recent call last):"), lines[0]
    return [re.sub(r"^\[rank\d\]: ?", "", line) for line in lines]


def _interleaved(dress: str) -> list[str]:
    first, second = _traceback(COLLATE_TRACEBACK), _traceback(LOST_PEER_TRACEBACK)
    out = []
    for i in range(max(len(first), len(second))):
        for pid, lines in ((RANK1_PID, first), (RANK0_PID, second)):
            if i < len(lines):
                out.append(dress.format(pid=pid) + lines[i])
    return out


@pytest.mark.parametrize("line, pid, header_pid", [
    ("[pid 4242] ValueError: x", 4242, None),
    ("4242: ValueError: x", 4242, None),
    ("I1129 18:48:38.105000 4715 torch/distributed/elastic/agent/server/api.py:714] x", None, 4715),
    # torch 2.3 and 2.4 print the thread id there, the same in every process: no process id
    ("W1201 19:58:00.519000 139660045224832 torch/distributed/run.py:779] x", None, None),
    ("(pid=77) [rank5]: RuntimeError: y", 77, None),
])
def test_the_process_id_a_prefix_names(line, pid, header_pid):
    stripped = strip_prefixes(line)
    assert (stripped.pid, stripped.header_pid) == (pid, header_pid)


def test_the_agents_header_pid_names_no_training_process(tmp_path):
    """Synthetic (torch 2.5+'s header, the agent's failed line): a line whose only process tag
    is the agent's header pid is not given the rank of a child that, in another container of a
    shared log, has the same pid."""
    log = tmp_path / "shared.log"
    log.write_text("E1129 19:27:52.640000 22 torch/distributed/elastic/agent/server/api.py:10] "
                   "RuntimeError: agent side\n"
                   "E1129 19:27:52.640000 9 torch/distributed/elastic/multiprocessing/api.py:1002] "
                   "failed (exitcode: 1) local_rank: 1 (pid: 22) of binary: /usr/bin/python3\n")
    scan = Scanner(load_catalogue()).scan_file(str(log), "shared.log")
    assert [(e.detail, e.where.local_rank) for e in scan.exceptions] == [("agent side", None)]


@pytest.mark.parametrize("dress", DRESSES.values(), ids=DRESSES.keys())
def test_each_traceback_keeps_its_own_frames(dress, tmp_path):
    log = tmp_path / "interleaved.log"
    log.write_text("\n".join(_interleaved(dress)) + "\n")
    scan = Scanner(load_catalogue()).scan_file(str(log), "interleaved.log")
    by_type = {e.exc_type + ": " + e.detail[:20]: e.traceback_signals for e in scan.exceptions}
    collate = [signals for name, signals in by_type.items() if name.startswith("ValueError")]
    lost_peer = [signals for name, signals in by_type.items() if name.startswith("RuntimeError")]
    assert len(collate) == 2 and len(lost_peer) == 1, by_type
    # The collate error's traceback runs in the DataLoader, not in backward, and lost no peer.
    assert all("cause-collator" in s and "training-frame" not in s and "peer-lost" not in s
               for s in collate), by_type
    assert "training-frame" in lost_peer[0] and "cause-collator" not in lost_peer[0], by_type


def _findings(run_cli, path) -> list[tuple]:
    result = run_cli("scan", path, "--format", "json", "--now", POST_MORTEM_NOW)
    report = json.loads(result.stdout)
    # what each finding says, not where its lines are (the interleaved log moved them)
    return [(f["rule"], f["node_rank"], f["rank"], f["cause"], f["message"], f["role"])
            for f in [report["root_cause"], *report["findings"]]]


def test_the_interleaved_job_is_diagnosed_as_its_real_sample(tmp_path, run_cli):
    """collate-error with worker-0's two tracebacks interleaved by pid: the same diagnosis as
    the real sample, to the message: a crash before the first batch caused by the collator
    (not a crash in training from the other process's backward frame), and rank 1's, since
    torchrun's report names pid 22190 as local rank 1 (rank 1) and 22188 as rank 0."""
    job = tmp_path / "job"
    shutil.copytree(SAMPLES / "collate-error", job)
    log = job / "worker-0" / "launch_ddp.log"
    lines = log.read_text().splitlines()
    start, end = COLLATE_TRACEBACK[0], LOST_PEER_TRACEBACK[1]
    lines[start - 1:end] = _interleaved(DRESSES["logging [pid N]"])
    log.write_text("\n".join(lines) + "\n")
    assert _findings(run_cli, job) == _findings(run_cli, SAMPLES / "collate-error")


def test_a_pid_two_processes_report_names_no_process(tmp_path):
    """Synthetic: one log holding two nodes' torchrun reports that give the same pid to different
    local ranks (containers number pids alike): the line tagged with that pid gets no rank."""
    log = tmp_path / "shared.log"
    log.write_text("[pid 77] ValueError: which one\n"
                   "E1129 19:27:52.640000 9 torch/distributed/elastic/multiprocessing/api.py:1002] "
                   "failed (exitcode: 1) local_rank: 0 (pid: 77) of binary: /usr/bin/python3\n"
                   "E1129 19:27:52.640000 9 torch/distributed/elastic/multiprocessing/api.py:1002] "
                   "failed (exitcode: 1) local_rank: 1 (pid: 77) of binary: /usr/bin/python3\n"
                   "[pid 78] ValueError: this one\n"
                   "E1129 19:27:53.640000 9 torch/distributed/elastic/multiprocessing/api.py:1002] "
                   "failed (exitcode: 1) local_rank: 1 (pid: 78) of binary: /usr/bin/python3\n")
    scan = Scanner(load_catalogue()).scan_file(str(log), "shared.log")
    assert [(e.detail, e.where.local_rank) for e in scan.exceptions] == [
        ("which one", None), ("this one", 1)]
