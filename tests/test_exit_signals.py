"""A process ended by a signal is named by that signal, with what it usually means, in every
wording an exit status takes (torchrun's -N, a shell's 128 + N, the signal's name)."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, sample_copy
from logscan.exit_signals import SIGNALS, parse_signal, signal_of_exit


@pytest.mark.parametrize("sample, rank, name, code", [("native-crash-segv", 1, "SIGSEGV", -11),
                                                      ("abort-sigabrt", 2, "SIGABRT", -6)])
def test_a_native_crash_is_named_by_its_signal(run_cli, sample, rank, name, code):
    """Real runs: rank 1 read address 0 (SIGSEGV), rank 2 called os.abort() (SIGABRT)."""
    result = run_cli("scan", SAMPLES / sample, "--format", "json", "--now", POST_MORTEM_NOW)
    root = json.loads(result.stdout)["root_cause"]
    assert root["rank"] == rank
    assert f"was killed by {name} (exit code {code})" in root["message"]
    assert SIGNALS[-code].meaning in root["message"]


@pytest.mark.parametrize("text, number", [("15", 15), ("Signals.SIGHUP", 1), ("SIGINT", 2),
                                          ("SIGWHAT", None), ("", None)])
def test_a_signal_in_every_wording(text, number):
    assert parse_signal(text) == number


@pytest.mark.parametrize("code, number", [(-9, 9), (-11, 11), (137, 9), (139, 11), (143, 15),
                                          (1, None), (0, None), (128, None), (255, None)])
def test_exit_statuses_that_name_a_signal(code, number):
    assert signal_of_exit(code) == number


def test_every_signal_a_platform_sends_has_a_meaning_and_a_hint():
    wanted = {"SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL",
              "SIGSEGV", "SIGPIPE", "SIGTERM", "SIGXCPU"}
    named = {s.name: s for s in SIGNALS.values()}
    assert wanted <= set(named)
    assert all(named[n].meaning and named[n].hint.endswith(".") for n in wanted)


@pytest.mark.parametrize("escalation", [
    # torch 2.x (agent's multiprocessing/api.py `_close`), and 1.13's spelling
    "W1129 18:47:52.045000 4351 torch/distributed/elastic/multiprocessing/api.py:1040] Unable to "
    "shutdown process 77777 via Signals.SIGTERM, forcefully exiting via Signals.SIGKILL",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Unable to shutdown process 77777 via 15, "
    "forcefully exitting via 9",
])
def test_a_sibling_torchrun_had_to_sigkill_is_not_the_oom_killers(run_cli, tmp_path, escalation):
    """Synthetic: the real crash-mid-training run (rank 1 raised) with torchrun's escalation of a
    sibling that ignored SIGTERM appended to node 0's log, built from the agent's format strings."""
    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log",
                      new=escalation + "\n  exitcode  : -9 (pid: 77777)  (SIGKILL)\n")
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["root_cause"]["rule"] == "crash-during-training"
    assert "worker-killed" not in {f["rule"] for f in report["findings"]}


def test_one_killed_process_told_by_its_failed_line_and_its_summary_row_is_one_finding(run_cli, tmp_path):
    # Synthetic: the real self-sigkill run's Worker 1 without its launch line (a paste that lost it),
    # so the `failed (exitcode: -9) local_rank: 0 (pid: P)` line names no global rank; the summary's
    # row for pid P does.

    job = sample_copy(tmp_path, "self-sigkill", "worker-1/launch_ddp.log",
                      "DDP launch: nnodes=2 node_rank=1 gpus_per_node=2 total_procs=4 master=127.0.0.1:29660\n", "")
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    killed = [f for f in report["findings"] if f["rule"] == "worker-killed"]
    assert [(f["rank"], len(f["evidence"])) for f in killed] == [(2, 3)], killed
