"""stopped-from-outside: torchrun signalled before anything failed by itself.

Fires on the real runs where Worker 1's torchrun got SIGHUP and SIGINT mid-training (two members
of the family: the numbers Python 3.11 prints, `Received 1 death signal` and `got signal: 2`).
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES


def scan_json(run_cli, path):
    result = run_cli("scan", path, "--format", "json", "--now", POST_MORTEM_NOW)
    return json.loads(result.stdout)


@pytest.mark.parametrize("sample, name, number", [("sighup-from-outside", "SIGHUP", 1),
                                                  ("sigint-from-outside", "SIGINT", 2)])
def test_the_stopped_worker_is_the_root_cause_and_its_signal_is_named(run_cli, sample, name, number):
    report = scan_json(run_cli, SAMPLES / sample)
    root = report["root_cause"]
    assert (root["rule"], root["node_rank"]) == ("stopped-from-outside", 1)
    assert f"received {name} (signal {number})" in root["message"]
    finding = next(f for f in report["findings"] if f["rule"] == "stopped-from-outside")
    assert "death signal" in finding["evidence"][0]["text"]


def test_a_stop_after_a_crash_elsewhere_is_the_teardown_not_the_cause(run_cli, tmp_path):
    """Synthetic job made of two real logs: node 0 of crash-mid-training (rank 1 raised) and node
    1 of sighup-from-outside (its torchrun got SIGHUP). A process failed by itself, so the signal
    is not the story."""
    job = tmp_path / "job"
    shutil.copytree(SAMPLES / "crash-mid-training" / "worker-0", job / "worker-0")
    shutil.copytree(SAMPLES / "sighup-from-outside" / "worker-1", job / "worker-1")
    rules = {f["rule"] for f in scan_json(run_cli, job)["findings"]}
    # (the two runs used different master ports: launch-mismatch says so too)
    assert "crash-during-training" in rules and "stopped-from-outside" not in rules


@pytest.mark.parametrize("signal", ["SIGHUP", "SIGINT"])
def test_torchrun_passing_a_signal_other_than_sigterm_on_says_it_got_it(run_cli, tmp_path, signal):
    """torchrun's agent shuts its processes down with the signal it received (api.py, `self._shutdown(
    e.sigval)`: `Sending process %s closing signal %s`); a failed sibling's are sent SIGTERM. Pasted with
    the 'Received ... death signal' line cut off, then torchrun's own traceback cut (synthetic lines)."""
    import json
    from conftest import POST_MORTEM_NOW
    (tmp_path / "paste.log").write_text(
        f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 102241 closing signal {signal}\n"
        f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 102242 closing signal {signal}\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/run.py", line 710, in run\n'
        "    elastic_launch(\n")
    report = json.loads(run_cli("scan", tmp_path / "paste.log", "--isolated", "--format", "json",
                                "--now", POST_MORTEM_NOW).stdout)
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert signal in report["root_cause"]["message"]
