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
    assert report["verdict"] == "RUNNING" and report["summary"].startswith("RUNNING")
    assert not any(f["severity"] == "error" for f in report["findings"])


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


# --- Settings.resolve: every value checked, flags over the file, rule dirs adding up -----------

import re
from datetime import timedelta
from pathlib import Path

import pytest

from logscan.errors import ConfigError
from logscan.settings import Settings


def resolve(flags=None, config=None, path="logscan.toml", env=None):
    return Settings.resolve(flags or {}, config or {}, Path(path) if config else None, env=env or {})


def test_defaults_are_the_dataclass_defaults():
    assert resolve() == Settings()
    assert Settings().format == "human" and Settings().fail_on == "error"
    assert Settings().output is None and Settings().config_path is None


def test_flags_win_and_rule_dirs_add_up(tmp_path):
    config = {"rules": ["mine"], "select": ["nccl-error"], "ignore": ["missing-rank"],
              "format": "json", "fail-on": "warning", "stall-after": "2h",
              "progress-patterns": [r"epoch \d+"]}
    path = tmp_path / "logscan.toml"
    from_file = Settings.resolve({}, config, path, env={})
    assert from_file.rule_dirs == (str(tmp_path / "mine"),)  # relative to the file
    assert (from_file.select, from_file.ignore) == (("nccl-error",), ("missing-rank",))
    assert (from_file.format, from_file.fail_on) == ("json", "warning")
    assert from_file.stall_after == timedelta(hours=2)
    assert from_file.config_path == path
    flags = {"rule_dirs": ["other"], "select": ["port-in-use"], "ignore": [], "format": "human",
             "fail_on": None, "stall_after": "5m", "progress_patterns": [r"iter \d+"]}
    both = Settings.resolve(flags, config, path, env={})
    assert both.rule_dirs == (str(tmp_path / "mine"), "other")
    assert both.select == ("port-in-use",)
    assert both.ignore == ("missing-rank",)  # an empty list flag is "not given"
    assert (both.format, both.fail_on) == ("human", "warning")
    assert both.stall_after == timedelta(minutes=5)
    assert both.progress_patterns == (r"iter \d+",)


@pytest.mark.parametrize("config, message", [
    ({"select": "nccl-error"},
     "logscan.toml: setting 'select' must be a list of rule ids, not a string"),
    ({"ignore": [1]},
     "logscan.toml: setting 'ignore' must be a list of rule ids, not a list holding a number"),
    ({"rules": "dir"}, "logscan.toml: setting 'rules' must be a list of directories, not a string"),
    ({"progress-patterns": "step"}, "setting 'progress-patterns' must be a list of regular expressions"),
    ({"progress-patterns": ["(unclosed"]}, "setting 'progress-patterns': invalid regular expression"),
    ({"progress-patterns": ["step|"]}, "matches an empty line"),
    ({"progress-patterns": ["a{4294967294}"]}, "too costly to run"),
    ({"format": "xml"}, "logscan.toml: setting 'format' must be one of human, json, concise, github, gitlab, junit, sarif, markdown, html, not 'xml'"),
    ({"format": 1}, "setting 'format' must be one of human, json, concise, github, gitlab, junit, sarif, markdown, html, not a number"),
    ({"fail-on": "fatal"}, "setting 'fail-on' must be one of error, warning, never, not 'fatal'"),
    ({"fail-on": True}, "not a boolean"),
    ({"stall-after": "0s"}, "setting 'stall-after' must be more than 0 and at most 30 days"),
    ({"stall-after": 0}, "must be more than 0"),
    ({"stall-after": "31d"}, "at most 30 days"),
    ({"stall-after": "9" * 30 + "d"}, "far too long"),
    ({"stall-after": "9" * 5000}, "far too long"),
    ({"stall-after": "soon"}, "setting 'stall-after': invalid duration 'soon'"),
    ({"stall-after": [30]}, "setting 'stall-after' must be a duration"),
    ({"colour": "always"}, "logscan.toml: unknown setting 'colour'"),
])
def test_a_bad_config_value_is_one_line_naming_the_file_and_key(config, message):
    with pytest.raises(ConfigError) as caught:
        resolve(config=config)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("flags, message", [
    ({"stall_after": "0"}, "--stall-after must be more than 0"),
    ({"stall_after": "100000d"}, "--stall-after"),
    ({"now": "yesterday"}, "--now: invalid time 'yesterday'"),
    ({"processes": -1}, "--jobs must be between 0"),
    ({"processes": 10**6}, "--jobs must be between 0"),
    ({"job_status": "done"}, "--job-status must be one of succeeded, failed, running"),
    ({"progress_patterns": ["st(?q)ep"]}, "--progress-pattern: invalid regular expression"),
    ({"progress_patterns": ["step\udcff"]}, "not valid UTF-8"),
    ({"progress_patterns": ["a{99999999999}"]}, "--progress-pattern: pattern 'a{99999999999}' has "
                                                "a counted repeat above {1000}: too costly to run"),
    ({"progress_patterns": ["(x+x+)+y", "(?P<n>a)(?P<n>b"]}, "--progress-pattern: invalid regular expression"),
])
def test_a_bad_flag_is_one_line_naming_the_flag(flags, message):
    with pytest.raises(ConfigError) as caught:
        resolve(flags)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_config_number_for_stall_after_is_seconds():
    assert resolve(config={"stall-after": 600}).stall_after == timedelta(minutes=10)


def test_leading_global_flags_become_a_scoped_group():
    patterns = [r"(?i)EPOCH \d+", r"(?x)(?s) ITER \ \d+ # comment", "STEPX"]
    settings = resolve({"progress_patterns": patterns})
    assert settings.progress_patterns == (r"(?i:EPOCH \d+)", "(?xs: ITER \\ \\d+ # comment\n)", "STEPX")
    # joined into one expression, as the scanner does with its own patterns and these
    joined = re.compile("|".join(f"(?:{p})" for p in settings.progress_patterns).encode())
    assert joined.search(b"epoch 3") and joined.search(b"ITER 7")
    assert not joined.search(b"stepx")  # the flag stays in its own group


def test_logscan_matcher_is_checked(monkeypatch):
    for good in ("python", "hyperscan", "auto", ""):
        if good == "hyperscan":
            pytest.importorskip("hyperscan")
        resolve(env={"LOGSCAN_MATCHER": good})
    with pytest.raises(ConfigError, match="LOGSCAN_MATCHER='bogus' is not a matcher"):
        resolve(env={"LOGSCAN_MATCHER": "bogus"})
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "hyperscan" else real(name, *a))
    with pytest.raises(ConfigError, match="hyperscan package is not installed"):
        resolve(env={"LOGSCAN_MATCHER": "hyperscan"})
