"""failure-elsewhere: processes failed only because they lost a peer or the store, and no failure
of their own is in the logs: the first failure is in lines that are not here."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW
from rule_spec import real_sample_tests, sample_lines

RULE = "failure-elsewhere"
FIRES_ON = [
    # rank 2 crashed on node 1, whose log was not collected
    "crash-elsewhere-not-collected-prod",
]
QUIET_ON = [
    "healthy-2x2-prod",
    # the crash is in view: crash-during-training, with the lost peers as its consequences
    "crash-mid-training-prod",
    # the other Worker's log stops with no error: worker-vanished
    "rdzv-c10d-master-lost",
    # the rank that left exited 0: rank-left-early
    "uneven-data-prod",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def _scan(run_cli, tmp_path, lines: list[str], *flags: str) -> dict:
    (tmp_path / "paste.log").write_text("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    result = run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated", "--now", POST_MORTEM_NOW,
                     *flags)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _rank0_traceback_of_crash_mid_training() -> list[str]:
    """Rank 0's own traceback from a real run (crash-mid-training-prod, node 0), cut from the rest
    of the log as a user pastes it: the gloo lost-peer error rank 1's crash gave it."""
    lines = [line.decode() for line in sample_lines("crash-mid-training-prod", "worker-0")]
    return [line for line in lines if line.startswith("[rank0]:")]


# The store's reset while fetching NCCL's unique id, from its format string in ProcessGroupNCCL.cpp
# (torch 2.2 on): "[" << rank_ << "] is setting up NCCL communicator and retrieving ncclUniqueId
# from [0] via c10d key-value store by key '" << storeKey << "', but store->get('" << storeKey <<
# "') got error: " (then the store's own error). Synthetic, with plausible values.
STORE_RESET = [
    "[rank15]: Traceback (most recent call last):",
    '[rank15]:   File "/workspace/train.py", line 88, in <module>',
    "[rank15]:     dist.all_reduce(torch.ones(1, device='cuda'))",
    "[rank15]: torch.distributed.DistBackendError: [15] is setting up NCCL communicator and retrieving ncclUniqueId "
    "from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
]


@pytest.mark.parametrize("lines", [_rank0_traceback_of_crash_mid_training(), STORE_RESET],
                         ids=["gloo-closed-by-peer", "store-reset"])
def test_a_paste_of_a_lost_peer_alone_is_a_failure_whose_cause_is_elsewhere(run_cli, tmp_path, lines):
    assert any("peer" in line for line in lines)
    report = _scan(run_cli, tmp_path, lines)
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert root["rule"] == RULE
    # The rank that lost its peer is no cause: none is named as the one that failed.
    assert root["rank"] is None


def test_with_the_platforms_failed_status_it_is_the_one_fallback_told(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, STORE_RESET, "--job-status", "failed")
    rules = [f["rule"] for f in report["findings"]]
    assert report["root_cause"]["rule"] == RULE
    assert "unexplained-failure" not in rules


def test_a_crash_in_view_keeps_the_lost_peers_as_its_consequences(run_cli, tmp_path):
    crash = ["[rank3]: Traceback (most recent call last):",
             '[rank3]:   File "/workspace/train.py", line 40, in <module>',
             "[rank3]: ValueError: Expected input batch_size (8) to match target batch_size (4)."]
    report = _scan(run_cli, tmp_path, crash + STORE_RESET)
    assert report["root_cause"]["rule"] != RULE
    assert RULE not in [f["rule"] for f in report["findings"]]


def test_a_keyboard_interrupt_alone_is_no_lost_peer(run_cli, tmp_path):
    """A process a stop from outside interrupted is a consequence too, but of no lost peer."""
    report = _scan(run_cli, tmp_path, ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
                                       "    main()", "KeyboardInterrupt"])
    assert RULE not in [f["rule"] for f in report["findings"]]
