"""Specific beats generic: when one line is both a known signature and a raised exception, the
finding is the signature and the raise its context, never a generic crash as root with the
specific finding folded under it.

Synthetic jobs: the real crash-mid-training run with rank 1's exception line replaced by one built
from a message torch raises (c10d's collective fingerprint check, CUDACachingAllocator's out of
memory); a GPU is needed for the real thing.
"""

from __future__ import annotations

import json
import pytest

from conftest import POST_MORTEM_NOW, sample_copy

ORIGINAL = "[rank1]: RuntimeError: non-finite loss encountered at step 10 (loss=nan); stopping"
RAISED = {
    "collective-mismatch": (
        "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running "
        "collective: CollectiveFingerPrint(SequenceNumber=10, OpType=ALLREDUCE, TensorShape=[4], "
        "TensorDtypes=Float), but Rank 0 is running collective: CollectiveFingerPrint("
        "SequenceNumber=10, OpType=BROADCAST, TensorShape=[4], TensorDtypes=Float)."),
    "cuda-out-of-memory": (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has "
        "a total capacity of 79.15 GiB of which 1.20 GiB is free."),
}


@pytest.mark.parametrize("rule", sorted(RAISED))
def test_the_signature_is_the_root_and_the_crash_its_context(run_cli, tmp_path, rule):
    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log", ORIGINAL, RAISED[rule])
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["root_cause"]["rule"] == rule
    crashes = [f for f in report["findings"] if f["rule"] == "crash-during-training"]
    assert crashes and all(f["role"] == "consequence" for f in crashes)


@pytest.mark.parametrize("lost_peer", [
    "[rank2]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.19.3",
    "job-cmt-worker-1:1234:5678 [0] NCCL WARN Net : Connection closed by remote peer 127.0.1.1<45678>",
])
def test_an_nccl_report_that_a_peer_went_away_is_a_consequence(run_cli, tmp_path, lost_peer):
    """Synthetic: the real crash-mid-training run (rank 1 raised) with node 1 also telling, in
    NCCL's words (ncclGetErrorString's remote error as torch raises it; NCCL's socket WARN), that
    its peer went away: a consequence of rank 1's crash, never an NCCL root cause."""
    job = sample_copy(tmp_path, "crash-mid-training", "worker-1/launch_ddp.log", new=lost_peer + "\n")
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert (report["root_cause"]["rule"], report["root_cause"]["rank"]) == ("crash-during-training", 1)
    assert "nccl-error" not in {f["rule"] for f in report["findings"]}
