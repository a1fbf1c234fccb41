"""argparse's error is a process's end: ArgumentParser.error prints the usage, then
`%(prog)s: error: %(message)s`, and exits with status 2 (argparse.py). prog is the script's file
name (`train.py`; `__main__.py` under `python -m` before Python 3.14, `python -m module` from
3.14). The launchers' own parsers (torch.distributed.launch's `launch.py`, `run.py`, `torchrun`)
fail the launch itself. torch.distributed.launch before 1.9 raised subprocess.CalledProcessError
from its own frames (torch/distributed/launch.py) once a process had failed: its traceback is the
launcher's report, not a process's failure.

The lines are SYNTHETIC, built from those format strings; the real run of this family is the
local-rank-argparse sample."""

from __future__ import annotations

import pytest

from conftest import paste_report
from logscan.scan.lineparse import ARGPARSE_EXIT, parse_announced

USAGE = "usage: train.py [-h] [--lr LR] [--data_dir DATA_DIR]\n"
# torch.distributed.launch's own traceback (1.x): launch.py's main() raising CalledProcessError,
# cut as pastes cut it
OLD_LAUNCHER_CUT = """\
Traceback (most recent call last):
  File "/opt/conda/lib/python3.6/runpy.py", line 193, in _run_module_as_main
    "__main__", mod_spec)
  File "/opt/conda/lib/python3.6/runpy.py", line 85, in _run_code
    exec(code, run_globals)
  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/launch.py", line 260, in <module>
    main()
  File "/opt/conda/lib/python3.6/site-p"""


@pytest.mark.parametrize("line, detail", [
    ("train.py: error: unrecognized arguments: --local_rank=2", "unrecognized arguments: --local_rank=2"),
    ("finetune.py: error: the following arguments are required: --output_dir",
     "the following arguments are required: --output_dir"),
    ("__main__.py: error: argument --mode: invalid choice: 'tran' (choose from 'train', 'eval')",
     "argument --mode: invalid choice: 'tran' (choose from 'train', 'eval')"),
    ("python -m trainer: error: argument --lr: invalid float value: 'x'", "argument --lr: invalid float value: 'x'"),
])
def test_a_scripts_argparse_error_is_its_exit(line, detail):
    assert parse_announced(line) == (ARGPARSE_EXIT, f"2 (argparse: {detail})")


@pytest.mark.parametrize("line", [
    "launch.py: error: the following arguments are required: training_script",  # torch.distributed.launch's own
    "run.py: error: unrecognized arguments: --nnode=2",
    "torchrun: error: the following arguments are required: training_script, training_script_args",
    "srun: error: node-3: task 1: Exited with exit code 2",
    "slurmstepd: error: *** STEP 12.0 ON node-3 CANCELLED AT 2024-04-20T09:09:37 ***",
    "2024-01-01 10:00:00 train.py: error: something in a log message",
])
def test_a_launchers_or_a_schedulers_error_is_no_process_exit(line):
    assert parse_announced(line) is None


def test_every_process_failing_argparse_under_the_old_launcher_is_the_failure(run_cli, tmp_path):
    errors = "".join(f"{USAGE}train.py: error: unrecognized arguments: --local_rank={i}\n" for i in (2, 0, 1))
    report = paste_report(run_cli, tmp_path, errors + OLD_LAUNCHER_CUT)
    root = report["root_cause"]
    assert report["verdict"] == "FAILED"
    assert root["rule"] == "crash-before-first-batch" and root["cause"] == "local-rank-argument"
    assert "argparse: unrecognized arguments" in root["message"] and "torchrun" not in root["message"]


def test_the_old_launchers_cut_traceback_alone_is_the_launchers(run_cli, tmp_path):
    """Without the processes' lines, its frames still say whose traceback it is."""
    report = paste_report(run_cli, tmp_path, OLD_LAUNCHER_CUT)
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert root["message"].startswith("torchrun on ") and "torchrun's own traceback" in root["message"]
    assert root["hint"].startswith("torchrun itself failed")
