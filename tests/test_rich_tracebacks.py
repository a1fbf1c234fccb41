"""Python exceptions in rich's dress, and the builtin exception names Python does not suffix.

rich.traceback (installed by accelerate, typer and other tools) draws a traceback in a box —
`╭── Traceback (most recent call last) ──╮`, frames as `│ /path/x.py:12 in main │` — and prints the
exception line below it as Python does. The tracebacks here are real: raised in the test and drawn
by rich itself; the jobs are real samples with their traceback swapped for rich's drawing of
one (conftest.sample_copy).
"""

from __future__ import annotations

import io
import json
import sys

import pytest
from rich.console import Console
from rich.traceback import Traceback

from conftest import POST_MORTEM_NOW, sample_copy
from logscan.catalogue import load_catalogue
from logscan.scan.lineparse import is_traceback_start, parse_exception
from logscan.scan.scanner import Scanner

SOURCE = '''\
def backward(loss):
    raise RuntimeError("Function 'MulBackward0' returned nan values in its 0th output.")


def load_tokenizer(path):
    raise Exception("expected value at line 1 column 1")


def step(loss):
    backward(loss)
'''


def _drawn(tmp_path, call: str) -> str:
    """rich's drawing of the traceback `call` raises in SOURCE, as a log file holds it."""
    module = tmp_path / "trainer.py"
    module.write_text(SOURCE)
    namespace: dict = {"__name__": "trainer"}
    exec(compile(SOURCE, str(module), "exec"), namespace)
    console = Console(file=io.StringIO(), width=120, color_system=None, force_terminal=False)
    try:
        eval(call, namespace)
    except Exception:
        console.print(Traceback.from_exception(*sys.exc_info(), width=120))
    return console.file.getvalue()


@pytest.mark.parametrize("line, expected", [
    ("Exception: expected value at line 1 column 1", ("Exception", "expected value at line 1 column 1")),
    ("StopIteration", ("StopIteration", "")),
    ("builtins.Exception: boom", ("builtins.Exception", "boom")),
    ("ValueError: x", ("ValueError", "x")),
])
def test_exception_lines_of_builtins_without_the_usual_suffix_are_read(line, expected):
    assert parse_exception(line) == expected


@pytest.mark.parametrize("line", ["Exceptional results: 3", "UserWarning: it may be slow", "Exceptions: 0"])
def test_words_that_only_start_like_an_exception_are_not(line):
    assert parse_exception(line) is None


def test_riches_box_opens_a_traceback_and_its_frames_tell_the_stage(tmp_path):
    drawn = _drawn(tmp_path, "step(1.0)")
    top = drawn.splitlines()[0]
    assert top.startswith("╭") and is_traceback_start(top)
    log = tmp_path / "launch_ddp.log"
    log.write_text(drawn)
    scan = Scanner(load_catalogue()).scan_file(str(log), "launch_ddp.log")
    (exc,) = scan.exceptions
    assert exc.exc_type == "RuntimeError" and "MulBackward0" in exc.detail
    assert "training-frame" in exc.traceback_signals


def test_a_job_whose_rank_died_with_a_rich_traceback_names_its_exception(run_cli, tmp_path):
    # import-error-one-rank, rank 3's Python traceback replaced by rich's drawing of another one
    drawn = _drawn(tmp_path, "load_tokenizer('tokenizer.json')").rstrip("\n")
    python_traceback = "\n".join([
        "Traceback (most recent call last):",
        '  File "/work/main/sample_logs/generate/train.py", line 32, in <module>',
        "    import flash_attn  # noqa: F401",
        "    ^^^^^^^^^^^^^^^^^",
        "ModuleNotFoundError: No module named 'flash_attn'",
    ])
    job = sample_copy(tmp_path / "copy", "import-error-one-rank", "worker-1/launch_ddp.log", python_traceback, drawn)
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    root = next(f for f in report["findings"] if f["role"] != "consequence")
    assert (root["rule"], root["node_rank"], root["rank"]) == ("crash-before-first-batch", 1, 3)
    assert "Exception: expected value at line 1 column 1" in root["message"]
