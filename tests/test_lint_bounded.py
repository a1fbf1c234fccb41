"""`logscan lint` under attack (issue 20): a FIFO, a device, a script past the size limit, shell
nested thousands of levels deep, Python too deep for `ast`, a UTF-8 byte order mark, and scripts
whose cost grew with the square (or the power) of their length. Each is a one-line error (exit
2) or a report, never a hang or a traceback; cost grows linearly, counted in the tree's node
texts read rather than timed. Every script here is SYNTHETIC, written by the test.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import logscan.lint.script_rules
import logscan.lint.shell
from logscan.catalogue import load_catalogue
from logscan.errors import InputError
from logscan.lint import lint, read_input
from logscan.limits import MAX_SCRIPT_BYTES, MAX_SCRIPT_NESTING

CATALOGUE = load_catalogue()
GUARDED = ("torchrun --nnodes=${WORLD_SIZE:?} --node_rank=${RANK:?} --master_addr=${MASTER_ADDR:?} "
           "--master_port=${MASTER_PORT:?} --nproc_per_node=$GPUS train.py")


def one_line_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    line = result.output.strip()
    assert "\n" not in line and all(w in line for w in words), result.output


@pytest.fixture
def text_reads(monkeypatch):
    """How many node texts the lint reads (its unit of work); a runaway stops the test at a
    million instead of hanging it."""
    count = [0]
    real = logscan.lint.shell.text

    def counted(node):
        count[0] += 1
        assert count[0] < 1_000_000, "lint reads without end"
        return real(node)

    monkeypatch.setattr(logscan.lint.shell, "text", counted)
    monkeypatch.setattr(logscan.lint.script_rules, "text", counted)
    return count


def lint_text(path, source: str):
    path.write_text(source)
    return lint(read_input([str(path)], None), CATALOGUE)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_lint_reads_only_regular_files(tmp_path, kind):
    # A real process with a deadline far beyond its cost: before the fix the FIFO blocked for
    # ever and /dev/zero grew to gigabytes; the deadline only keeps a regression from hanging.
    if kind == "fifo":
        target = tmp_path / "launch.sh"
        os.mkfifo(target)
    else:
        target = "/dev/zero"
    for args in ([str(target)], ["--command-file", str(target)], ["--train-script", str(target)]):
        done = subprocess.run([sys.executable, "-m", "logscan", "lint", "--isolated", *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "not a regular file" in done.stderr, done.stderr


def test_a_directory_and_a_script_past_the_limit_are_one_line(run_cli, tmp_path):
    one_line_error(run_cli("lint", "--isolated", str(tmp_path)), "not a regular file")
    big = tmp_path / "big.sh"
    big.write_text("#" * MAX_SCRIPT_BYTES + "\necho\n")
    one_line_error(run_cli("lint", "--isolated", str(big)), "big.sh", "larger than")
    one_line_error(run_cli("lint", "--isolated", "--command", "#" * (MAX_SCRIPT_BYTES + 1)),
                   "larger than")


@pytest.mark.parametrize("source", [
    "x=" + "$(" * 3000 + "echo" + ")" * 3000 + "\n",
    "x=$((" + "+".join(["1"] * 20000) + "))\n",
    "x=" + "${A:-" * 3000 + "1" + "}" * 3000 + "\n",
], ids=["command-substitutions", "arithmetic", "defaults"])
def test_shell_nested_past_the_limit_is_one_line(run_cli, tmp_path, source):
    script = tmp_path / "deep.sh"
    script.write_text(source)
    one_line_error(run_cli("lint", "--isolated", str(script)), "deep.sh:1",
                   f"nested more than {MAX_SCRIPT_NESTING} levels")


def test_shell_nested_deep_but_within_the_limit_is_linted(tmp_path):
    # 490 substitutions, 983 levels of the tree: past Python's recursion limit had the walk
    # recursed once per level.
    source = "set -euo pipefail\nGPUS=" + "$(echo " * 490 + "nvidia-smi" + ")" * 490 + "\n" + GUARDED + "\n"
    diagnosis = lint_text(tmp_path / "deep.sh", source)
    assert [f.rule for f in diagnosis.findings] == []


@pytest.mark.parametrize("source, words", [
    ("x = " + "+".join(["1"] * 100_000) + "\n", ("nested too deeply",)),
    ("x = " + "(" * 500 + ")" * 500 + "\n", ("cannot parse",)),
    ("x = 1\0\n", ("cannot parse",)),
], ids=["long-sum", "brackets", "nul"])
def test_python_too_deep_for_ast_is_one_line(run_cli, tmp_path, source, words):
    script = tmp_path / "train.py"
    script.write_text(source)
    one_line_error(run_cli("lint", "--isolated", "--train-script", str(script)), "train.py", *words)


def test_a_training_script_with_a_byte_order_mark_is_read(run_cli, tmp_path):
    script = tmp_path / "train.py"
    script.write_bytes(b"\xef\xbb\xbfimport argparse\np = argparse.ArgumentParser()\n"
                       b"p.add_argument('--local_rank', type=int, default=0)\n")
    result = run_cli("lint", "--isolated", "--format", "concise", "--train-script", str(script))
    assert "lint-local-rank-argparse" in result.output and "train.py:3:" in result.output, result.output


def _launches(count: int) -> str:
    """A script of `count` torchrun launches, each fed by assignments before it."""
    body = [f"NODE_{i}=${{RANK:?}}\nGPUS=$(nvidia-smi -L | wc -l)\n"
            + GUARDED.replace("${RANK:?}", f"$NODE_{i}") + f" 2>&1 | tee log{i}\n" for i in range(count)]
    return "#!/bin/bash\nset -euo pipefail\n" + "".join(body)


def test_the_cost_grows_linearly_with_the_launches(tmp_path, text_reads):
    costs = []
    for count in (150, 300):
        text_reads[0] = 0
        diagnosis = lint_text(tmp_path / f"launch{count}.sh", _launches(count))
        assert diagnosis.findings == ()
        costs.append(text_reads[0])
    # Every launch looked up its variables among every assignment before it: about 4x for
    # twice the launches. Now each lookup is an index's.
    assert costs[1] < 2.2 * costs[0], costs


def test_a_value_built_from_itself_over_and_over_is_followed_a_bounded_way(tmp_path, text_reads):
    # A_i=$A_{i-1}$A_{i-1}: following every reference is 2^40 steps.
    chain = "".join(f"A{i}=$A{i - 1}$A{i - 1}\n" for i in range(1, 41))
    source = f"set -euo pipefail\nA0=${{RANK:?}}\n{chain}" + GUARDED.replace("${RANK:?}", "$A40") + "\n"
    diagnosis = lint_text(tmp_path / "chain.sh", source)
    assert text_reads[0] < 100_000
    assert {f.rule for f in diagnosis.findings} <= {"lint-torchrun-arg-not-from-platform",
                                                    "lint-gpu-count-not-from-node"}


def test_a_long_chain_of_assignments_is_followed_without_recursing_per_link(tmp_path):
    chain = "".join(f"A{i}=$A{i - 1}\n" for i in range(1, 5000))
    source = "set -euo pipefail\nA0=${RANK:?}\n" + chain + GUARDED.replace("${RANK:?}", "$A4999") + "\n"
    diagnosis = lint_text(tmp_path / "chain.sh", source)
    # Past MAX_TRACE_DEPTH links the value is told as another command's, not followed further.
    told = [f.message for f in diagnosis.findings if f.rule == "lint-torchrun-arg-not-from-platform"]
    assert told == ["--node_rank comes from `$A4999`; it must come from the platform's RANK"], told


# Words of launch scripts, shell syntax that nests and breaks, and text that is neither.
SHELL_WORDS = st.sampled_from([
    "torchrun", "python -m torch.distributed.run", "--nnodes=", "--node_rank", "$RANK", "${WORLD_SIZE:?}",
    "${A:-", "}", "$(", ")", "$((", "))", "1+", "`", "'", '"', "\\\n", "\n", " ", "|", "||", "&&",
    ";", "&", "<(", ">(", "<<EOF\n", "EOF\n", "export ", "WORLD_SIZE=", "X=", "set -euo pipefail",
    "if ", "then ", "fi", "for ", "do ", "done", "case ", "esac", "{", "(", "[[", "]]", "#", "!",
    "exit $?", "rc=${PIPESTATUS[0]}", "\x00", "\ufeff", "\udcff", "é",
])
PY_WORDS = st.sampled_from([
    "import os\n", "add_argument('--local_rank')", "os.environ['WORLD_SIZE'] = '1'\n", "(", ")", "[",
    "]", "1+", "a.", "b", "\n", " ", ":", "def f():\n", "    ", "'", '"', "\\", "\x00", "\ufeff", "lambda",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shell=st.lists(SHELL_WORDS, max_size=60).map("".join),
       python=st.lists(PY_WORDS, max_size=40).map("".join))
def test_generated_scripts_give_a_report_or_one_input_error(tmp_path_factory, shell, python):
    folder = tmp_path_factory.mktemp("fuzz")
    script, train = folder / "launch.sh", folder / "train.py"
    script.write_bytes(shell.encode("utf-8", "surrogateescape"))
    train.write_bytes(python.encode("utf-8", "surrogateescape"))
    for scripts, command, trains in (([str(script)], None, ()), ([], shell, ()), ([], None, [str(train)])):
        try:
            lint(read_input(scripts, command, trains), CATALOGUE)
        except InputError as exc:
            assert "\n" not in str(exc)
