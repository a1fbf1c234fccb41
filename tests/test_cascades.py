"""Cascades of a big job: the rank that raised is the root, the ranks that waited are its cascade.

Synthetic logs, built here from the real wordings of torchrun's summary, c10d's `[rankN]:` prefixes
and NCCL's watchdog (see /work/shared/torch-messages.md): the samples come from CPU-only torch and
cannot show NCCL.
"""

from __future__ import annotations

from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings

LAUNCH = "DDP launch: nnodes=2 node_rank={node} gpus_per_node=2 total_procs=4 master=10.0.0.1:29500"
SUMMARY = """============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-29_17:58:40
  host      : worker-{node}
  rank      : {second} (local_rank: 1)
  exitcode  : {second_code} (pid: 14751)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 14751
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_17:58:40
  host      : worker-{node}
  rank      : {first} (local_rank: 0)
  exitcode  : {first_code} (pid: 14750)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 14750
============================================================"""


def _watchdog(rank: int) -> list[str]:
    return [
        f"[rank{rank}]:[E1129 17:58:31.426415540 ProcessGroupNCCL.cpp:629] [Rank {rank}] Watchdog caught "
        f"collective operation timeout: WorkNCCL(SeqNum=1201, OpType=ALLREDUCE, NumelIn=1024, "
        f"NumelOut=1024, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
        f"[rank{rank}]:[E1129 17:58:31.427000000 ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) "
        f"Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
        f"CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
    ]


def _job(tmp_path, crash_node: int):
    """Rank 1 of `crash_node` raises mid-training; every other rank times out in the watchdog and
    aborts (-6). Steps are logged by rank 0 only, as most scripts do."""
    for node in (0, 1):
        lines = [LAUNCH.format(node=node)]
        lines += [f"torchrun env: RANK= {2 * node + i} LOCAL_RANK= {i} WORLD_SIZE= 4" for i in (0, 1)]
        if node == 0:
            lines += [f"step {i}/1000 loss 1.{i:02d}" for i in range(1, 40)]
        crasher = 2 * crash_node + 1
        for rank in (2 * node, 2 * node + 1):
            if rank == crasher:
                lines += [f"[rank{rank}]: Traceback (most recent call last):",
                          f'[rank{rank}]:   File "/work/train.py", line 88, in <module>',
                          f"[rank{rank}]: RuntimeError: CUDA error: an illegal memory access was encountered"]
            else:
                lines += _watchdog(rank)
        # On the crash node torchrun SIGTERMs the sibling; elsewhere the watchdog aborts (-6).
        first_code, second_code = (-15, 1) if node == crash_node else (-6, -6)
        lines += SUMMARY.format(node=node, first=2 * node, second=2 * node + 1, first_code=first_code,
                                second_code=second_code).splitlines()
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text("\n".join(lines) + "\n")
    return diagnose_paths([str(tmp_path)], Settings(job_status="failed"))


def test_the_rank_that_raised_is_the_root_wherever_it_is(tmp_path):
    for crash_node in (0, 1):
        job = tmp_path / str(crash_node)
        job.mkdir()
        got = _job(job, crash_node)
        assert got.root_cause is not None
        assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
            "crash-during-training", crash_node, 2 * crash_node + 1), got.summary()
        assert got.first_failure.rank == 2 * crash_node + 1
        waited = [p for p in got.processes if p.rank != 2 * crash_node + 1 and p.failed]
        assert waited and all(p.cascade for p in waited), got.processes


def test_a_ranked_report_of_a_failure_wins_over_a_rankless_one():
    """Two reports of one failure with no time to order them: the one that names its rank leads."""
    from types import SimpleNamespace

    from logscan.catalogue import load_catalogue
    from logscan.diagnosis import Evidence, Finding
    from logscan.diagnose.root_cause import _pick_leader

    job = SimpleNamespace(catalogue=load_catalogue())
    line = Evidence("job/worker-1/launch_ddp.log", 40, "RuntimeError: CUDA error")
    rankless = Finding("crash-during-training", "error", "a process raised", "", "training",
                       node_rank=1, evidence=(line,))
    ranked = Finding("crash-during-training", "error", "rank 3 raised", "", "training",
                     node_rank=1, rank=3, evidence=(line,))
    assert _pick_leader(job, [rankless, ranked]) is ranked
    assert _pick_leader(job, [ranked, rankless]) is ranked
