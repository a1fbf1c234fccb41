"""Causes and hints that fit the common crash families: the crash names its cause class and gets
that cause's hint, not a generic one.

Synthetic jobs: the real crash-mid-training run with rank 1's exception line replaced by one
built from the message torch, CUDA, the OS or the DataLoader raises (these need a GPU, a full
disk or a killed worker to happen for real); the non-finite loss is the real run's own line.
"""

from __future__ import annotations

import json
import pytest

from conftest import POST_MORTEM_NOW, sample_copy
from logscan.catalogue import load_catalogue

ORIGINAL = "[rank1]: RuntimeError: non-finite loss encountered at step 10 (loss=nan); stopping"
RAISED = {
    "disk-full": "[rank1]: OSError: [Errno 28] No space left on device: '/mnt/out/checkpoint-500/optimizer.pt'",
    "device-ordinal": "[rank1]: torch.AcceleratorError: CUDA error: invalid device ordinal",
    "dataloader-killed": "[rank1]: RuntimeError: DataLoader worker (pid 32117) is killed by signal: Killed. ",
    "non-finite-loss": ORIGINAL,
    "model-mismatch": ("[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 has 6 "
                       "params, while rank 0 has inconsistent 4 params."),
}


@pytest.mark.parametrize("cause", sorted(RAISED))
def test_a_crash_names_its_cause_and_gets_its_hint(run_cli, tmp_path, cause):
    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log", ORIGINAL, RAISED[cause])
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    root = next(f for f in report["findings"] if not f["cascade"])
    assert (root["rule"], root["rank"], root["cause"]) == ("crash-during-training", 1, cause)
    assert root["hint"] == load_catalogue().cause_hint(cause)
