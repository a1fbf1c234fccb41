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
