"""Hostile log text: terminal escapes, rich markup and CI workflow commands reach every output
format shown but inert, and a user rule that backtracks forever times out without stopping the
scan.

The logs are SYNTHETIC: REAL lines of sample_logs/healthy-2x2 with hostile text put on the lines
that become evidence (the launch line, a traceback's exception line).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES

WORKER0 = (SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log").read_text()

CLEAR_SCREEN = "\x1b[2J\x1b[H"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"                      # OSC 52: write the clipboard
LINK = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"  # OSC 8 hyperlink
C1_CSI = "\u009b31m"                                             # C1 control sequence introducer
BIDI = "\u202egnp.exe"                                           # right-to-left override
MARKUP = "[bold red]markup[/bold red] [link=https://evil.example]link[/link]"
MASK = "::add-mask::secret-token"
ERROR = "::error file=train.py,line=1::forged annotation"
PAYLOAD = f"{CLEAR_SCREEN} {CLIPBOARD} {LINK} {C1_CSI} {BIDI} {MARKUP} {MASK} {ERROR}"


def hostile_log() -> bytes:
    lines = WORKER0.splitlines()
    launch = next(i for i, l in enumerate(lines) if "DDP launch:" in l)
    lines[launch] = f"{ERROR} {PAYLOAD} {lines[launch]}"
    lines += [
        "Traceback (most recent call last):",
        '  File "/work/main/sample_logs/generate/train.py", line 231, in <module>',
        f"{MASK}",
        f"RuntimeError: boom {PAYLOAD}",
    ]
    # a raw C1 byte, which is not UTF-8 on its own
    return ("\n".join(lines) + "\n").encode() + b"RuntimeError: raw \x9b2J byte\n"


def run(args, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real command in a subprocess, as a CI job runs it."""
    return subprocess.run([sys.executable, "-m", "logscan", *map(str, args)], cwd=cwd,
                          capture_output=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", "TERM": "xterm-256color"})


def cli(args, cwd: Path) -> subprocess.CompletedProcess:
    """The same command in this process (typer's CliRunner): faster."""
    from typer.testing import CliRunner

    from logscan.cli import app

    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, [str(a) for a in args],
                                    env={"COLUMNS": "200", "TERM": "xterm-256color"})
    finally:
        os.chdir(here)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes,
                                       result.stderr_bytes)


SGR = re.compile(r"\x1b\[[0-9;]*m")


def assert_inert(text: str, colour_allowed: bool = False) -> None:
    """Nothing in `text` can act on a terminal or a CI runner."""
    if colour_allowed:
        text = SGR.sub("", text)  # rich's own colours, nothing else
    assert "\x1b" not in text and "\x07" not in text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", text)
    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), line


def assert_visible(text: str) -> None:
    """The hostile text is still there to read, as escapes."""
    assert "\\x1b[2J" in text and "\\x1b]52;c;cm0gLXJmIH4=\\x07" in text
    assert "\\x1b]8;;https://evil.example/\\x1b\\click me" in text
    assert "\\x9b31m" in text and "\\u202egnp.exe" in text
    assert MARKUP in text  # as typed, not as styling
    assert "::add-mask::secret-token" in text and "::error file=train.py" in text


@pytest.fixture
def job(tmp_path) -> Path:
    job = tmp_path / "job"
    (job / "worker-0").mkdir(parents=True)
    (job / "worker-0" / "launch_ddp.log").write_bytes(hostile_log())
    return job


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "color"])
def test_human_report_is_inert(job, colour):
    result = run(["scan", job, "--now", POST_MORTEM_NOW, *(["--color"] if colour else [])], job.parent)
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode("utf-8")
    assert "RuntimeError: boom" in text  # the exception line is evidence
    if colour:
        assert SGR.search(text), "--color colours the report"
    assert_inert(text, colour_allowed=colour)
    assert_visible(SGR.sub("", text))


def test_json_report_is_inert(job):
    result = cli(["scan", job, "--format", "json", "--now", POST_MORTEM_NOW], job.parent)
    assert result.returncode == 1, result.stderr
    raw = result.stdout.decode("ascii")  # ensure_ascii: every control character is escaped
    assert_inert(raw)
    assert "\\u001b[2J" in raw and "\\u009b31m" in raw and "\\u202e" in raw
    evidence = [e["text"] for f in json.loads(raw)["findings"] for e in f["evidence"]]
    assert any(CLIPBOARD in t and MARKUP in t for t in evidence)  # the data itself is kept


def test_report_file_is_inert(job, tmp_path):
    target = tmp_path / "report.txt"
    result = cli(["scan", job, "--now", POST_MORTEM_NOW, "-o", target], job.parent)
    assert result.returncode == 1 and result.stdout == b"", result.stderr
    text = target.read_text(encoding="utf-8")
    assert_inert(text)
    assert_visible(text)


def test_workflow_command_in_a_file_name(job):
    """Evidence lines start with the file's name: a log named `::warning::x.log`, given as the
    path, would put a workflow command at the start of a report line."""
    (job / "::warning::x.log").write_bytes(hostile_log())
    result = cli(["scan", "::warning::x.log", "--now", POST_MORTEM_NOW], job)
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode("utf-8")
    assert "\\x3a:warning::x.log:1" in text  # defused, still readable
    assert_inert(text)


def test_error_messages_are_inert(tmp_path):
    name = f"missing{CLEAR_SCREEN}{ERROR}\nline.log"
    result = cli(["scan", name], tmp_path)
    assert result.returncode == 2
    text = result.stderr.decode("utf-8")
    assert text.count("\n") == 1 and text.startswith("logscan: error: ")
    assert_inert(text)
    assert "\\x1b[2J" in text and "\\x0aline.log" in text


RULE = """
id = "{id}"
kind = "signal"
stage = "training"
summary = "A user's rule whose pattern backtracks catastrophically."
{keywords}
patterns = ['(a+)+$']

[docs]
what = "Lines of a's."
why = "To show that a runaway pattern cannot stop a scan."
example = "aaaa!"
fix = "Write patterns that cannot backtrack."
"""


@pytest.mark.parametrize("keywords", [True, False], ids=["with-keywords", "without-keywords"])
def test_catastrophic_user_rule_times_out_and_the_scan_completes(tmp_path, keywords):
    rule_id = "catastrophic-backtracking"
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / f"{rule_id}.toml").write_text(RULE.format(
        id=rule_id, keywords='keywords = ["aaaa"]' if keywords else ""))
    job = tmp_path / "job"
    (job / "worker-0").mkdir(parents=True)
    # 50 lines on which the pattern backtracks for seconds (rules see a line's first 2000
    # characters, so the lines are shorter than that)
    (job / "worker-0" / "launch_ddp.log").write_text(WORKER0 + ("a" * 1900 + "!\n") * 50)

    started = time.monotonic()
    result = cli(["scan", job, "--rules", rules, "--now", POST_MORTEM_NOW, "--fail-on", "never"],
                 tmp_path)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    text = result.stdout.decode("utf-8")
    note = next(l for l in text.splitlines() if l.startswith("note:"))
    assert rule_id in note and "timed out" in note, text
    assert "1 file(s)" in text.splitlines()[-1]
    assert elapsed < 60, elapsed  # a few timeouts, then the rule is given up for that file


@pytest.mark.parametrize("keywords", [True, False], ids=["with-keywords", "without-keywords"])
def test_a_runaway_rule_spends_its_budget_once_per_scan_not_per_file(tmp_path, keywords):
    rule_id = "catastrophic-backtracking"
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / f"{rule_id}.toml").write_text(RULE.format(
        id=rule_id, keywords='keywords = ["aaaa"]' if keywords else ""))
    job = tmp_path / "job"
    for node in range(8):  # eight Workers' logs, each with lines the pattern runs away on
        (job / f"worker-{node}").mkdir(parents=True)
        (job / f"worker-{node}" / "launch_ddp.log").write_text(
            WORKER0.replace("node_rank=0", f"node_rank={node}") + ("a" * 1900 + "!\n") * 10)
    result = cli(["scan", job, "--rules", rules, "--now", POST_MORTEM_NOW, "--fail-on", "never",
                  "--jobs", "1"], tmp_path)
    assert result.returncode == 0, result.stderr
    notes = [l for l in result.stdout.decode().splitlines() if l.startswith("note:") and "timed out" in l]
    assert 1 <= len(notes) <= 3, notes


@pytest.mark.parametrize("keywords", [True, False], ids=["with-keywords", "without-keywords"])
def test_runaway_rules_share_one_budget_per_scan(tmp_path, keywords, monkeypatch):
    """Synthetic: twenty user rules that each run away on the same lines. Each is given up, but
    together they cost the scan about the budget, not three timeouts each (the seconds counted
    are those of the timeouts that fired: what the runaway patterns cost). The budget is made
    smaller than RUNAWAY_BUDGET here: the behaviour is the same, the test shorter."""
    import logscan.scan.interpret as interpret
    from logscan.catalogue import load_catalogue
    from logscan.limits import RUNAWAY_TIMEOUT_PAST_BUDGET
    from logscan.scan.scanner import Scanner

    monkeypatch.setattr(interpret, "RUNAWAY_BUDGET", 0.5)

    rules = tmp_path / "rules"
    rules.mkdir()
    ids = [f"catastrophic-backtracking-{n}" for n in range(20)]
    for rule_id in ids:
        (rules / f"{rule_id}.toml").write_text(RULE.format(
            id=rule_id, keywords='keywords = ["aaaa"]' if keywords else ""))
    log = tmp_path / "launch_ddp.log"
    log.write_text(WORKER0 + ("a" * 1900 + "!\n") * 10)
    scanner = Scanner(load_catalogue([rules]), matcher="python")
    scan = scanner.scan_file(str(log), "launch_ddp.log")
    assert set(scan.rule_timeouts) == set(ids)  # each noted, each given up
    fired = scanner.rule_timeouts
    assert fired.spent <= 0.5 + 1.0 + 2 * len(ids) * RUNAWAY_TIMEOUT_PAST_BUDGET, fired.spent
    assert all(count <= 3 for count in fired.counts.values())


def test_a_progress_pattern_that_backtracks_on_a_one_line_log_returns(tmp_path):
    # SYNTHETIC: the one-line log of issue 17, on which `re` never returned.
    job = tmp_path / "job"
    (job / "worker-0").mkdir(parents=True)
    (job / "worker-0" / "launch_ddp.log").write_text("x" * 40 + "\n")
    result = run(["scan", job, "--progress-pattern", "(x+x+)+y", "--now", POST_MORTEM_NOW],
                 tmp_path, timeout=30)
    assert result.returncode == 1, result.stderr  # INCONCLUSIVE: nothing shows a torchrun job
    assert b"INCONCLUSIVE" in result.stdout


def test_a_runaway_progress_pattern_times_out_and_the_scan_completes(tmp_path):
    # SYNTHETIC: healthy-2x2 with lines `(a+)+$` backtracks on for seconds, even on the rule
    # engine; the pattern is given up after its budget and training progress is still found.
    job = tmp_path / "job"
    (job / "worker-0").mkdir(parents=True)
    (job / "worker-0" / "launch_ddp.log").write_text(WORKER0 + ("a" * 1900 + "!\n") * 50)
    (job / "worker-1").mkdir()
    (job / "worker-1" / "launch_ddp.log").write_bytes(
        (SAMPLES / "healthy-2x2" / "worker-1" / "launch_ddp.log").read_bytes())
    started = time.monotonic()
    # in a subprocess, so that a pattern that runs away again fails the test, not the suite
    result = run(["scan", job, "--progress-pattern", "(a+)+$", "--now", POST_MORTEM_NOW,
                  "--jobs", "1"], tmp_path, timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stdout
    text = result.stdout.decode("utf-8")
    assert text.startswith("HEALTHY"), text
    notes = [l for l in text.splitlines() if l.startswith("note:")]
    assert len(notes) == 1, notes
    assert "--progress-pattern '(a+)+$' timed out" in notes[0], notes
    assert elapsed < 30, elapsed  # three lines' timeouts, then the pattern is given up


def test_scan_output_to_a_fifo_no_one_reads_is_one_line_not_a_wait(tmp_path):
    """Synthetic: `-o` names a FIFO with no reader (opening it to write would wait for ever)."""
    import os
    import subprocess
    import sys

    from conftest import REPO, SAMPLES

    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    result = subprocess.run([sys.executable, "-m", "logscan", "scan", str(SAMPLES / "healthy-2x2"),
                             "-o", str(fifo)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "FIFO" in result.stderr and fifo.is_fifo()


def test_scan_output_through_a_symbolic_link_writes_its_target(run_cli, tmp_path):
    from conftest import SAMPLES

    target, link = tmp_path / "report.json", tmp_path / "link.json"
    target.write_text("old\n")
    link.symlink_to(target)
    result = run_cli("scan", SAMPLES / "healthy-2x2", "-f", "json", "-o", link)
    assert link.is_symlink() and '"verdict": "HEALTHY"' in target.read_text(), result.output
