"""What a command-line user expects of any tool: -h, -V, -q, shell completion, `-` for standard
input, help that names values (PATH, N, DURATION) rather than internal types, bad values and
usage errors answered in one line of logscan's own words, comma lists, FORCE_COLOR, and a PATH
inside another PATH being the same job."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES

COMMANDS = (("scan",), ("check",), ("report",), ("sweep",), ("lint",), ("rules",), ("rules", "explain"))
# How a validation library or click's internals would show through: a Python type in the help,
# or a message in someone else's words.
INTERNAL_TYPE = re.compile(r"<(?:list\[|str>|int>|path>|bool>)|\{paths\}|\{dirs\}")
FOREIGN_WORDS = ("Value error", "Input should be", "Invalid value for", "Try '", "Usage:")


@pytest.fixture(autouse=True)
def _not_under_github(monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_dash_h_is_help_and_no_help_shows_an_internal_type(run_cli, command):
    short, long = run_cli(*command, "-h"), run_cli(*command, "--help")
    assert short.exit_code == 0 and short.output == long.output, short.output
    assert not INTERNAL_TYPE.search(short.output), INTERNAL_TYPE.search(short.output)


def test_only_the_commands_that_judge_a_job_print_the_job_exit_table(run_cli):
    job_table = "HEALTHY or RUNNING"
    for command in (("scan",), ("check",), ("report",)):
        assert job_table in run_cli(*command, "-h").output, command
    rules, lint = run_cli("rules", "-h").output, run_cli("lint", "-h").output
    assert job_table not in rules and job_table not in lint
    assert "the rules were listed or explained" in rules
    assert "findings at or above --fail-on" in lint and "INCONCLUSIVE" not in lint


def test_dash_capital_v_is_the_version(run_cli):
    assert run_cli("-V").output == run_cli("--version").output
    assert run_cli("-V").output.startswith("logscan ")


@pytest.mark.parametrize("args, words", [
    (("scan", "JOB", "--fail-on", "bogus"), "--fail-on must be one of error, warning, never, not 'bogus'"),
    (("scan", "JOB", "--format", "xml"), "--format must be one of human, json"),
    (("scan", "JOB", "--job-status", "done"), "--job-status must be one of succeeded, failed, running"),
    (("scan", "JOB", "--jobs", "two"), "--jobs must be a whole number, not 'two'"),
    (("check", "JOB", "--expect-workers", "two"), "--expect-workers must be a whole number, not 'two'"),
    (("check", "JOB", "--max-warnings", "-1"), "--max-warnings must be a whole number, not '-1'"),
    (("scan", "JOB", "--bogus"), "no such option: --bogus"),
    (("scan",), "scan needs PATH..."),
    (("rules", "explain"), "rules explain needs ID"),
])
def test_bad_values_are_one_line_in_logscans_words(run_cli, args, words):
    args = [str(SAMPLES / "healthy-2x2") if a == "JOB" else a for a in args]
    result = run_cli(*args, "--isolated") if args[0] in ("scan", "check") and len(args) > 1 else run_cli(*args)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("logscan: error: "), result.output
    assert words in result.output, result.output
    assert not any(foreign in result.output for foreign in FOREIGN_WORDS), result.output


def test_quiet_prints_no_report_but_keeps_the_exit_status_and_the_files(run_cli, tmp_path):
    report = tmp_path / "report.json"
    failed = run_cli("scan", SAMPLES / "crash-mid-training", "--isolated", "-q", "--json-output", report)
    assert failed.exit_code == 1 and failed.output == ""
    assert report.read_text().startswith("{")
    passed = run_cli("check", SAMPLES / "healthy-2x2", "--isolated", "-q", "--expect-workers", "2")
    assert passed.exit_code == 0 and passed.output == ""
    linted = run_cli("lint", "--command", "torchrun --nnodes 2 train.py", "--isolated", "-q")
    assert linted.exit_code == 1 and linted.output == ""


def test_dash_reads_one_log_from_standard_input(tmp_path):
    from typer.testing import CliRunner

    from logscan.cli import app

    log = (SAMPLES / "crash-mid-training" / "worker-0" / "launch_ddp.log").read_bytes()
    result = CliRunner().invoke(app, ["scan", "-", "--isolated", "--format", "concise"], input=log,
                                env={"NO_COLOR": "1"})
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("<stdin>:13: error: crash-during-training"), result.stdout
    assert "logscan-stdin-" not in result.output  # the spool file never shows
    empty = CliRunner().invoke(app, ["scan", "-", "--isolated"], input="", env={"NO_COLOR": "1"})
    assert empty.exit_code == 2 and "<stdin>" in empty.output and "logscan-stdin-" not in empty.output


def test_a_path_inside_another_is_the_same_job(run_cli):
    job = SAMPLES / "healthy-2x2"
    alone = run_cli("scan", job, "--isolated", "--now", POST_MORTEM_NOW, "--format", "json")
    both = run_cli("scan", job, job / "worker-1", job / "worker-1" / "launch_ddp.log", "--isolated",
                   "--now", POST_MORTEM_NOW, "--format", "json")
    assert both.exit_code == alone.exit_code == 0, both.output
    assert both.stdout == alone.stdout


def test_ignore_and_select_take_comma_separated_ids(run_cli):
    job = SAMPLES / "crash-mid-training"
    both = run_cli("scan", job, "--isolated", "--format", "concise",
                   "--ignore", "crash-during-training,missing-worker-log")
    assert both.exit_code == 1, both.output  # what explains the failure is ignored ...
    assert "crash-during-training" not in both.stdout and "missing-worker-log" not in both.stdout
    assert "unexplained-failure" in both.stdout  # ... so the verdict says nothing explains it
    one = run_cli("scan", job, "--isolated", "--format", "concise", "--select", "crash-during-training,")
    assert "error: crash-during-training" in one.stdout and "missing-worker-log" not in one.stdout
    misspelt = run_cli("scan", job, "--isolated", "--ignore", "crash-during-training,no-such-rule")
    assert misspelt.exit_code == 2 and "no-such-rule" in misspelt.output


@pytest.mark.parametrize("env, coloured", [
    ({"FORCE_COLOR": "1", "NO_COLOR": None}, True),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # no-color.org: NO_COLOR wins
    ({"FORCE_COLOR": "", "NO_COLOR": None}, False),  # force-color.org: an empty value is unset
])
def test_force_color_is_honoured_off_a_terminal(env, coloured):
    from typer.testing import CliRunner

    from logscan.cli import app

    result = CliRunner().invoke(app, ["scan", str(SAMPLES / "crash-mid-training"), "--isolated"],
                                env={"COLUMNS": "120", **env})
    assert ("\x1b[" in result.stdout) is coloured, result.stdout[:200]


def test_shell_completion_is_on():
    """Completion as the shell asks for it: the installed command, with the variable bash sets."""
    command = Path(sys.executable).parent / "logscan"
    if not command.exists():
        pytest.skip("no logscan command beside this interpreter (not an installed environment)")
    env = {**os.environ, "_LOGSCAN_COMPLETE": "complete_bash", "COMP_CWORD": "3"}
    formats = subprocess.run([command], env={**env, "COMP_WORDS": "logscan scan --format j"},
                             capture_output=True, text=True, timeout=60)
    assert formats.stdout.split() == ["json", "junit"], formats
    commands = subprocess.run([command], env={**env, "COMP_WORDS": "logscan sc", "COMP_CWORD": "1"},
                              capture_output=True, text=True, timeout=60)
    assert commands.stdout.split() == ["scan"], commands
    # Without a shell among its ancestors (a CI runner, a detached job) typer's --show-completion
    # cannot guess one; naming the shell, as this variable lets it, does not depend on who ran it.
    script = subprocess.run([command, "--show-completion", "bash"], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert script.returncode == 0 and "_LOGSCAN_COMPLETE" in script.stdout


@pytest.mark.parametrize("command", [
    ("scan", str(SAMPLES / "healthy-2x2"), "--format", "json", "--now", POST_MORTEM_NOW),
    ("check", str(SAMPLES / "healthy-2x2"), "--format", "json", "--now", POST_MORTEM_NOW),
    ("report", str(SAMPLES / "healthy-2x2"), "--now", POST_MORTEM_NOW),
    ("lint", "--command", "torchrun --nnodes 2 train.py", "--format", "json"),
], ids=lambda command: command[0])
def test_dash_o_dash_is_standard_output(run_cli, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    result = run_cli(*command, "--isolated", "-o", "-")
    assert result.exit_code in (0, 1), result.output
    assert result.stdout.lstrip().startswith(("{", "<!DOCTYPE html>")), result.stdout[:200]
    assert not (tmp_path / "-").exists()
    assert "wrote" not in result.stderr


def _report_on_a_terminal(cwd: Path, *args: str) -> tuple[int, bytes, bytes]:
    """`logscan report` with a pseudo-terminal as standard output, as a person runs it: (exit
    status, what reached the terminal, stderr)."""
    import pty

    main, child = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "logscan", "report", *args, "--now", POST_MORTEM_NOW,
                               "--isolated"], stdout=child, stderr=subprocess.PIPE, cwd=cwd, timeout=120)
        os.set_blocking(main, False)
        shown = b""
        try:
            while chunk := os.read(main, 65536):
                shown += chunk
        except (BlockingIOError, OSError):
            pass
    finally:
        os.close(main)
        os.close(child)
    return done.returncode, shown, done.stderr


def test_report_on_a_terminal_writes_a_file_and_says_where(tmp_path):
    status, shown, said = _report_on_a_terminal(tmp_path, str(SAMPLES / "healthy-2x2"))
    page = tmp_path / "logscan-report-healthy-2x2.html"
    assert status == 0, said
    assert b"<html" not in shown and page.read_text().startswith("<!DOCTYPE html>")
    assert said.decode().splitlines() == [
        f"logscan: wrote logscan-report-healthy-2x2.html: HEALTHY healthy-2x2: 2 Worker(s), finished (30/30 steps)"]
    page.write_text("kept\n")
    status, shown, said = _report_on_a_terminal(tmp_path, str(SAMPLES / "healthy-2x2"))
    assert page.read_text() == "kept\n"
    again = tmp_path / "logscan-report-healthy-2x2-2.html"
    assert again.read_text().startswith("<!DOCTYPE html>")
    assert "logscan-report-healthy-2x2.html exists, kept" in said.decode(), said
    status, shown, said = _report_on_a_terminal(tmp_path, str(SAMPLES / "healthy-2x2"), "-o", "-")
    assert shown.startswith(b"<!DOCTYPE html>") and not said


def test_report_in_a_pipe_writes_the_page_to_standard_output(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli("report", SAMPLES / "healthy-2x2", "--now", POST_MORTEM_NOW, "--isolated")
    assert result.stdout.startswith("<!DOCTYPE html>") and list(tmp_path.iterdir()) == []
