"""Handled is not failed: an exception logged and recovered from, or an attempt torchrun
restarted from when the restarted attempt went on, is history; the outcome is the last state."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, sample_copy


def scan_json(run_cli, path):
    return json.loads(run_cli("scan", path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


@pytest.mark.parametrize("sample", ["restart-recovered", "restart-recovered-torch2.4"])
def test_a_restart_that_recovered_is_a_warning_naming_the_failed_attempts_cause(run_cli, sample):
    """Real runs (torch 2.13 and 2.4.1): rank 1 raised in attempt 0, torchrun restarted both
    worker groups and attempt 1 trained to the end."""
    report = scan_json(run_cli, SAMPLES / sample)
    assert report["verdict"] == "HEALTHY"
    [warning] = report["findings"]
    assert (warning["rule"], warning["severity"], warning["rank"]) == ("restart-recovered", "warning", 1)
    assert "rank 1 failed with RuntimeError: shard reader" in warning["message"]


@pytest.mark.parametrize("sample, root", [("restart-not-recovered", "crash-during-training"),
                                          ("restart-loop", "crash-before-first-batch")])
def test_a_restart_that_failed_again_stays_the_failure(run_cli, sample, root):
    report = scan_json(run_cli, SAMPLES / sample)
    rules = {f["rule"] for f in report["findings"]}
    assert report["verdict"] == "FAILED" and report["root_cause"]["rule"] == root
    assert "restart-loop" in rules and "restart-recovered" not in rules


def test_an_exception_logged_while_the_run_went_on_to_its_end_is_history(run_cli):
    """Real run: rank 2 logged a caught FileNotFoundError with logging.exception and retried;
    training reached step 30/30 and the platform says succeeded."""
    report = scan_json(run_cli, SAMPLES / "handled-exception")
    assert report["verdict"] == "HEALTHY" and report["findings"] == []


def test_the_same_traceback_in_a_job_the_platform_says_failed_is_kept(run_cli, tmp_path):
    """Synthetic: the handled-exception sample with its platform status changed to failed.
    Nothing then says the exception was survived by the job, so it is not set aside."""
    job = sample_copy(tmp_path, "handled-exception")
    (job / "job_status").write_text("failed\n")
    report = scan_json(run_cli, job)
    assert report["verdict"] == "FAILED"
    assert any("FileNotFoundError" in f["message"] for f in report["findings"])


@pytest.mark.parametrize("head", [
    # PyErr_WriteUnraisable's header: 3.8-3.11 for every unraisable exception, 3.12 on for atexit's
    "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7fc7fa34f7f0>",
    "Exception ignored in atexit callback: <function _MultiProcessingDataLoaderIter._clean_up_worker at 0x7fc7fa34f7f0>",
])
@pytest.mark.parametrize("cut", [False, True], ids=["whole", "cut"])
def test_a_traceback_python_printed_for_an_exception_it_ignored_fails_nothing(run_cli, tmp_path, head, cut):
    """Synthetic lines from CPython's format: the header, the traceback, its exception line (or the
    log ending inside it). The process went on: nothing failed."""
    lines = [head, "Traceback (most recent call last):",
             '  File "/usr/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 1475, in _clean_up_worker',
             "    w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)"]
    if not cut:
        lines.append("AttributeError: 'NoneType' object has no attribute 'join'")
    (tmp_path / "x.log").write_text("step 3/30 loss 1.2\n" + "\n".join(lines) + "\n")
    result = run_cli("scan", tmp_path / "x.log", "--format", "json", "--isolated", "--now", "2030-01-01T00:00:00Z")
    report = json.loads(result.stdout)
    assert report["verdict"] != "FAILED", report["findings"]
