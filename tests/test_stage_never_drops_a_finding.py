"""The stage chooses which rule; it never decides whether there is a finding. A log whose only
content is NCCL's watchdog timeout and torchrun's failure line (a pasted excerpt: no launch line,
no env print, no progress) is a failure, and where it happened is taken from positive evidence.

The lines are built from torch's format strings (ProcessGroupNCCL.cpp's watchdog message, in
its 2.x form with SeqNum and its 1.x form without; torchrun's `failed (exitcode: N)` line from
torch/distributed/elastic/multiprocessing/api.py): NCCL needs GPUs, so no real run here has them.
"""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW

FAILED_LINE = ("E1129 18:58:40.096000 4351 torch/distributed/elastic/multiprocessing/api.py:869] "
               "failed (exitcode: -6) local_rank: {local} (pid: 4356) of binary: /usr/bin/python3")


def watchdog(rank: int, seq: int | None) -> str:
    work = (f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)"
            if seq is not None else "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=600000)")
    return (f"[rank{rank}]:[E1129 18:58:31.426415540 ProcessGroupNCCL.cpp:629] [Rank {rank}] Watchdog "
            f"caught collective operation timeout: {work} ran for 600081 milliseconds before timing out.")


def scan(run_cli, tmp_path, lines):
    log = tmp_path / "excerpt.log"
    log.write_text("\n".join(lines) + "\n")
    return json.loads(run_cli("scan", log, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


@pytest.mark.parametrize("seq", [None, 7])
def test_a_watchdog_timeout_alone_is_a_finding_whatever_the_stage(run_cli, tmp_path, seq):
    report = scan(run_cli, tmp_path, [watchdog(1, seq), FAILED_LINE.format(local=1)])
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] in ("hang-before-first-batch", "collective-timeout")
    # the abort that follows NCCL's watchdog is its consequence, not a native crash
    assert not any(f["rule"].startswith("crash-") for f in report["findings"])


@pytest.mark.parametrize("seq", [1001, 70312])
def test_a_collective_numbered_far_past_start_up_means_training_had_started(run_cli, tmp_path, seq):
    report = scan(run_cli, tmp_path, [watchdog(0, seq), watchdog(1, seq)])
    assert report["root_cause"]["rule"] == "collective-timeout"
    assert "after training had started" in report["root_cause"]["message"]
