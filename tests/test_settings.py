"""Settings: staleness against --now, rule selection, and pyproject/logscan.toml with CLI priority."""

from __future__ import annotations

import json
import os
import shutil

from conftest import SAMPLES

RUNNING = SAMPLES / "hang-still-running"


def _copy_with_mtime(tmp_path, sample, when: float):
    target = tmp_path / sample.name
    shutil.copytree(sample, target)
    for path in target.rglob("*"):
        os.utime(path, (when, when))
    return target


def test_a_fresh_running_log_is_still_running_not_a_failure(run_cli, tmp_path):
    job = _copy_with_mtime(tmp_path, RUNNING, 1_800_000_000)  # 2027-01-15T08:00:00Z
    result = run_cli("scan", job, "--now", "2027-01-15T08:10:00Z", "--format", "json")
    report = json.loads(result.output)
    assert result.exit_code == 0, result.output
    assert report["healthy"] and report["summary"].startswith("RUNNING")


def test_a_stale_running_log_is_hung_before_the_first_batch(run_cli, tmp_path):
    job = _copy_with_mtime(tmp_path, RUNNING, 1_800_000_000)
    result = run_cli("scan", job, "--now", "2027-01-15T09:00:00Z", "--format", "json")
    report = json.loads(result.output)
    assert result.exit_code == 1
    assert report["root_cause"]["rule"] == "hang-before-first-batch"


def test_stall_after_moves_the_threshold(run_cli, tmp_path):
    job = _copy_with_mtime(tmp_path, RUNNING, 1_800_000_000)
    args = ("scan", job, "--now", "2027-01-15T08:10:00Z")
    assert run_cli(*args, "--stall-after", "5m").exit_code == 1
    assert run_cli(*args, "--stall-after", "1h").exit_code == 0


def test_job_status_option_overrides_the_file(run_cli, tmp_path):
    job = _copy_with_mtime(tmp_path, RUNNING, 1_800_000_000)
    result = run_cli("scan", job, "--now", "2027-01-15T08:10:00Z", "--job-status", "succeeded",
                     "--format", "json")
    report = json.loads(result.output)
    assert report["job_status"] == "succeeded"
    assert "masked-exit-code" in {f["rule"] for f in report["findings"]}


def test_select_and_ignore(run_cli):
    job = SAMPLES / "import-error-one-rank"
    only = json.loads(run_cli("scan", job, "--format", "json", "--select", "missing-rank").output)
    assert {f["rule"] for f in only["findings"]} == {"missing-rank"}
    without = json.loads(run_cli("scan", job, "--format", "json", "--ignore", "missing-rank").output)
    assert "missing-rank" not in {f["rule"] for f in without["findings"]}


def test_pyproject_settings_apply_and_the_cli_wins(run_cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.logscan]\nignore = ["missing-rank"]\nformat = "json"\n')
    monkeypatch.chdir(tmp_path)
    job = SAMPLES / "import-error-one-rank"
    report = json.loads(run_cli("scan", job).output)
    assert "missing-rank" not in {f["rule"] for f in report["findings"]}
    human = run_cli("scan", job, "--format", "human").output
    assert human.startswith("FAILED")


def test_logscan_toml_with_unknown_key_is_a_one_line_error(run_cli, tmp_path, monkeypatch):
    (tmp_path / "logscan.toml").write_text('colour = "always"\n')
    monkeypatch.chdir(tmp_path)
    result = run_cli("scan", SAMPLES / "healthy-2x2")
    assert result.exit_code == 2 and "colour" in result.output
    assert result.output.count("\n") == 1


def test_bad_duration_and_time_are_usage_errors(run_cli):
    assert run_cli("scan", SAMPLES / "healthy-2x2", "--stall-after", "soon").exit_code == 2
    assert run_cli("scan", SAMPLES / "healthy-2x2", "--now", "yesterday").exit_code == 2
