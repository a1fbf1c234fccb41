"""collective-timeout: After training had started, a collective timed out because one rank stopped
taking part."""

from __future__ import annotations

from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests
from test_cascades import LAUNCH, SUMMARY, _watchdog  # torchrun's and NCCL's own wordings

RULE = "collective-timeout"
FIRES_ON = [
    "stall-mid-training",
    "stall-mid-training-torch1.13",
    "stall-mid-training-torch2.1",
]
QUIET_ON = [
    "healthy-2x2",
    # the peers of a rank that raised lost it: that crash's cascade, not a timeout
    "crash-mid-training",
    # a stall before the first batch is hang-before-first-batch
    "hang-before-ddp",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_in_a_pure_hang_the_rank_behind_in_the_collective_sequence_is_the_straggler(tmp_path):
    """Synthetic NCCL hang (real watchdog wording): every rank times out, nobody raised; three
    wait in collective 1201, rank 2 is still in 1200. The others waited for rank 2."""
    for node in (0, 1):
        lines = [LAUNCH.format(node=node)]
        lines += [f"torchrun env: RANK= {2 * node + i} LOCAL_RANK= {i} WORLD_SIZE= 4" for i in (0, 1)]
        if node == 0:
            lines += [f"step {i}/1000 loss 1.{i:02d}" for i in range(1, 40)]
        for rank in (2 * node, 2 * node + 1):
            lines += [line.replace("SeqNum=1201", "SeqNum=1200") if rank == 2 else line
                      for line in _watchdog(rank)]
        lines += SUMMARY.format(node=node, first=2 * node, second=2 * node + 1, first_code=-6,
                                second_code=-6).splitlines()
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text("\n".join(lines) + "\n")
    got = diagnose_paths([str(tmp_path)], Settings(job_status="failed"))
    assert got.root_cause is not None, got.summary()
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
        "collective-timeout", 1, 2), got.summary()
