"""Which config file applies (the nearest, never above the repository root), --config, --isolated,
and its path on the Settings. The config files and rule files are SYNTHETIC, written by each test;
the one real scan uses a sample job."""

from __future__ import annotations

import json

import pytest

from conftest import SAMPLES
from logscan.errors import InputError

HEALTHY = SAMPLES / "healthy-2x2"
SIGNAL_RULE = """id = "{id}"
kind = "signal"
stage = "training"
summary = {summary}
patterns = ['MY_SIGNAL_LINE']
[docs]
what = "what it is"
why = "why"
example = "MY_SIGNAL_LINE"
fix = "fix it"
"""


@pytest.fixture
def settings_of(run_cli, monkeypatch):
    """The Settings `logscan scan ARGS...` would diagnose with, run in `cwd`; nothing is scanned."""
    import logscan.diagnose.pipeline

    seen = []

    def record(paths, settings, catalogue=None, pool=None, **_):
        seen.append(settings)
        raise InputError("stopped here by the test")

    monkeypatch.setattr(logscan.diagnose.pipeline, "diagnose_paths", record)

    def settings_of(cwd, *args):
        monkeypatch.chdir(cwd)
        result = run_cli("scan", HEALTHY, *args)
        assert "stopped here by the test" in result.output, result.output
        return seen.pop()

    return settings_of


def test_the_nearest_config_file_applies(tmp_path, settings_of):
    (tmp_path / ".git").mkdir()  # a repository: its config files apply up to its root
    (tmp_path / "logscan.toml").write_text('format = "json"\n')
    (tmp_path / "project" / "src").mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text('[tool.logscan]\nfail-on = "warning"\n')
    settings = settings_of(tmp_path / "project" / "src")
    assert settings.config_path == tmp_path / "project" / "pyproject.toml"
    assert (settings.format, settings.fail_on) == ("human", "warning")  # only the nearest file
    settings = settings_of(tmp_path)
    assert settings.config_path == tmp_path / "logscan.toml" and settings.format == "json"


def test_a_pyproject_without_a_logscan_table_is_passed_over(tmp_path, settings_of):
    (tmp_path / ".git").mkdir()
    (tmp_path / "logscan.toml").write_text('fail-on = "never"\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.other]\nx = 1\n')
    assert settings_of(tmp_path / "sub").config_path == tmp_path / "logscan.toml"


def test_logscan_toml_comes_before_pyproject_in_one_directory(tmp_path, settings_of):
    (tmp_path / "logscan.toml").write_text('fail-on = "never"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.logscan]\nfail-on = "warning"\n')
    assert settings_of(tmp_path).fail_on == "never"


@pytest.mark.parametrize("git", ["directory", "file"])
def test_a_config_above_the_repository_root_does_not_apply(tmp_path, settings_of, git):
    (tmp_path / "logscan.toml").write_text('format = "json"\n')
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    if git == "directory":
        (repo / ".git").mkdir()
    else:  # a worktree or a submodule
        (repo / ".git").write_text("gitdir: /elsewhere\n")
    settings = settings_of(repo / "src")
    assert settings.config_path is None and settings.format == "human"
    (repo / "pyproject.toml").write_text('[tool.logscan]\nfail-on = "never"\n')  # at the root: applies
    assert settings_of(repo / "src").config_path == repo / "pyproject.toml"


def test_config_names_the_file_and_isolated_reads_none(tmp_path, settings_of):
    (tmp_path / "logscan.toml").write_text('format = "json"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "ci.toml").write_text('fail-on = "never"\n')
    (elsewhere / "pyproject.toml").write_text('[tool.logscan]\nfail-on = "warning"\n')
    settings = settings_of(tmp_path, "--config", elsewhere / "ci.toml")
    assert settings.config_path == elsewhere / "ci.toml"
    assert (settings.format, settings.fail_on) == ("human", "never")
    assert settings_of(tmp_path, "--config", elsewhere / "pyproject.toml").fail_on == "warning"
    settings = settings_of(tmp_path, "--isolated")
    assert settings.config_path is None and settings.format == "human"


@pytest.mark.parametrize("setup, args, message", [
    (None, ("--config", "missing.toml"), "--config missing.toml: no such file"),
    (None, ("--config", "."), "is not a file"),
    ('[tool.other]\n', ("--config", "pyproject.toml"), "has no [tool.logscan] table"),
    (None, ("--config", "x.toml", "--isolated"), "cannot be used together"),
])
def test_config_option_errors_are_one_line(run_cli, tmp_path, monkeypatch, setup, args, message):
    monkeypatch.chdir(tmp_path)
    if setup:
        (tmp_path / "pyproject.toml").write_text(setup)
    result = run_cli("scan", HEALTHY, *args)
    assert result.exit_code == 2 and message in result.output, result.output
    assert result.output.count("\n") == 1


@pytest.mark.parametrize("content, message", [
    ('select = "nccl-error"\n',
     "logscan: error: logscan.toml: setting 'select' must be a list of rule ids, not a string"),
    ('stall-after = "0m"\n', "logscan.toml: setting 'stall-after' must be more than 0"),
    ('stall-after = "10000d"\n', "at most 30 days"),
    ('format = "xml"\n', "logscan.toml: setting 'format' must be one of human, json"),
    ('progress-patterns = ["(?i)step", "(unclosed"]\n', "setting 'progress-patterns': invalid"),
    ('select = [\n', "logscan.toml: cannot read settings"),
    (b'format = "\xff"\n', "logscan.toml: cannot read settings: not UTF-8"),
])
def test_a_bad_config_file_is_one_line_exit_2(run_cli, tmp_path, monkeypatch, content, message):
    path = tmp_path / "logscan.toml"
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    monkeypatch.chdir(tmp_path)
    result = run_cli("scan", HEALTHY)
    assert result.exit_code == 2 and message in result.output, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_a_real_scan_with_settings_from_pyproject(run_cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.logscan]\nselect = ["missing-worker"]\nformat = "json"\n')
    monkeypatch.chdir(tmp_path)
    result = run_cli("scan", SAMPLES / "missing-worker")
    assert result.exit_code == 1
    assert {f["rule"] for f in json.loads(result.output)["findings"]} == {"missing-worker"}


def test_rules_lists_and_explains_rules_from_the_config(run_cli, tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "sig.toml").write_text(SIGNAL_RULE.format(id="my-signal", summary='"mine"'))
    (tmp_path / "logscan.toml").write_text('rules = ["mine"]\n')
    monkeypatch.chdir(tmp_path)
    result = run_cli("rules", "explain", "my-signal")
    assert result.exit_code == 0 and "what it is" in result.output
    assert run_cli("rules", "--isolated", "explain", "my-signal").exit_code == 2


def test_the_report_says_which_settings_file_it_used(run_cli, tmp_path, monkeypatch):
    (tmp_path / "logscan.toml").write_text('stall-after = "2h"\n')
    monkeypatch.chdir(tmp_path)
    human = run_cli("scan", SAMPLES / "healthy-2x2", "--now", "2030-01-01T00:00:00Z")
    assert f"settings from {tmp_path / 'logscan.toml'}" in human.output
    report = json.loads(run_cli("scan", SAMPLES / "healthy-2x2", "--format", "json").output)
    assert report["config_file"] == str(tmp_path / "logscan.toml")
    isolated = json.loads(run_cli("scan", SAMPLES / "healthy-2x2", "--format", "json", "--isolated").output)
    assert isolated["config_file"] is None
