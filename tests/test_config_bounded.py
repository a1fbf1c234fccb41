"""Settings and rule files under attack (issue 20): a TOML nesting bomb, a FIFO or device where a
file should be, a `--rules` tree deeper than Python recurses, and a `logscan.toml` left above the
current directory outside any repository. Each is a one-line error (exit 2) or is not read.
The config and rule files are SYNTHETIC, written by each test; the jobs scanned are real samples.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import SAMPLES
from logscan.catalogue import rule_files
from logscan.config import config_folders

HEALTHY = SAMPLES / "healthy-2x2"
FAILED = SAMPLES / "crash-mid-training"
BOMB = "a = " + "[" * 100_000 + "]" * 100_000 + "\n"
SIGNAL_RULE = """id = "deep-signal"
kind = "signal"
stage = "training"
summary = "a signal at the bottom of a deep tree"
patterns = ['MY_DEEP_SIGNAL_LINE']
[docs]
what = "what it is"
why = "why"
example = "MY_DEEP_SIGNAL_LINE"
fix = "fix it"
"""


def one_line_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "internal error" not in result.output, result.output
    assert all(w in result.output for w in words), result.output


@pytest.mark.parametrize("name, content", [
    ("logscan.toml", BOMB),
    ("pyproject.toml", "[tool.logscan]\n" + BOMB),
])
def test_a_toml_nesting_bomb_in_a_found_config_is_one_line(run_cli, tmp_path, monkeypatch, name, content):
    (tmp_path / name).write_text(content)
    monkeypatch.chdir(tmp_path)
    one_line_error(run_cli("scan", HEALTHY), name, "nested too deeply")
    one_line_error(run_cli("lint", "--command", "echo"), name, "nested too deeply")


def test_a_toml_nesting_bomb_named_with_config_is_one_line(run_cli, tmp_path):
    (tmp_path / "ci.toml").write_text(BOMB)
    one_line_error(run_cli("scan", HEALTHY, "--config", tmp_path / "ci.toml"), "nested too deeply")


def test_a_config_that_is_a_fifo_or_a_device_is_never_opened(run_cli, tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "logscan.toml")
    monkeypatch.chdir(tmp_path)
    assert run_cli("scan", HEALTHY, "--format", "concise").exit_code == 0  # passed over, not read
    one_line_error(run_cli("scan", HEALTHY, "--config", "/dev/zero"), "not a file")


def test_a_rule_file_that_is_a_fifo_is_one_line(run_cli, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    os.mkfifo(rules / "x.toml")
    one_line_error(run_cli("scan", HEALTHY, "--isolated", "--rules", rules), "x.toml", "not a regular file")


@pytest.fixture
def deep_rules(tmp_path):
    """A rules tree 1,500 directories deep (3,000 characters of path: within PATH_MAX) with one
    rule file at the bottom. Made one directory at a time, each below the last one's descriptor,
    and removed with `rm -rf` (which does not recurse): makedirs and rmtree recurse once per
    level, and a tree left behind would stop pytest's own clean-up of old temporary directories.
    In memory (/dev/shm) where there is one: a disk takes seconds to remove 1,500 levels."""
    memory = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(dir=memory)) if memory.is_dir() and os.access(memory, os.W_OK) else tmp_path
    rules = base / "rules"
    os.mkdir(rules)
    folder = os.open(rules, os.O_RDONLY)
    try:
        for _ in range(1500):
            os.mkdir("d", dir_fd=folder)
            below = os.open("d", os.O_RDONLY, dir_fd=folder)
            os.close(folder)
            folder = below
        with open(os.open("deep-signal.toml", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder), "w") as out:
            out.write(SIGNAL_RULE)
    finally:
        os.close(folder)
    yield rules, Path(str(rules) + "/d" * 1500)
    subprocess.run(["rm", "-rf", str(base if base != tmp_path else rules)], check=True)


def test_a_rules_tree_deeper_than_python_recurses_is_read(run_cli, deep_rules):
    rules, bottom = deep_rules
    assert rule_files(rules) == [bottom / "deep-signal.toml"]
    result = run_cli("rules", "--isolated", "--rules", rules, "explain", "deep-signal")
    assert result.exit_code == 0 and "a signal at the bottom of a deep tree" in result.output, result.output


def test_a_linked_directory_in_a_rules_tree_makes_no_loop(tmp_path):
    rules = tmp_path / "rules"
    (rules / "sub").mkdir(parents=True)
    (rules / "sub" / "deep-signal.toml").write_text(SIGNAL_RULE)
    (rules / "sub" / "again").symlink_to(rules)
    assert rule_files(rules) == [rules / "sub" / "deep-signal.toml"]


def test_outside_a_repository_a_config_above_the_current_directory_is_not_read(run_cli, tmp_path,
                                                                               monkeypatch):
    # `fail-on = "never"` two levels up would let `check` pass a FAILED job.
    (tmp_path / "logscan.toml").write_text('fail-on = "never"\n')
    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    assert config_folders(here) == (here,)
    monkeypatch.chdir(here)
    result = run_cli("check", FAILED, "--format", "concise")
    assert result.exit_code == 1, result.output
    named = run_cli("check", FAILED, "--format", "concise", "--config", tmp_path / "logscan.toml")
    assert named.exit_code == 0, named.output
    (here / "logscan.toml").write_text('fail-on = "never"\n')  # in the current directory: read
    assert run_cli("check", FAILED, "--format", "concise").exit_code == 0


def test_inside_a_repository_config_files_are_looked_for_up_to_its_root(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    here = tmp_path / "repo" / "a" / "b"
    here.mkdir(parents=True)
    assert config_folders(here) == (here, here.parent, tmp_path / "repo")
