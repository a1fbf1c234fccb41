"""Other launchers' report of a process's end is read as torchrun's: DeepSpeed's launcher
(deepspeed/launcher/launch.py) logs `{cmd} exits with return code = {code}`, and before 0.6 raised
subprocess.CalledProcessError. The lines are built from those format strings (a DeepSpeed run
needs DeepSpeed and, for its launcher's usual use, GPUs); the log around them is DeepSpeed's own
logging format. torch.distributed.launch before 1.9 raised the same CalledProcessError.

Both quote `cmd`, the variable their spawning loop left behind (`for local_rank in range(...):
cmd = [...]; cmd.append(f"--local_rank={local_rank}")`): the command of the last process they
started, whichever one failed. Its `--local_rank=N` names the failed process only when N is 0, the
node's only process."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW
from logscan.scan.lineparse import parse_summary_line

CMD = "['/usr/bin/python3', '-u', 'main.py', '--local_rank=1', '--deepspeed', 'ds.json']"
HEAD = """\
[2023-04-14 13:10:01,101] [INFO] [launch.py:145:main] WORLD INFO DICT: {'localhost': [0, 1]}
[2023-04-14 13:10:01,101] [INFO] [launch.py:151:main] nnodes=1, num_local_procs=2, node_rank=0
[2023-04-14 13:10:05,201] [INFO] [comm.py:652:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl
[2023-04-14 13:11:27,879] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266
[2023-04-14 13:11:27,880] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13267
"""


@pytest.mark.parametrize("line, local_rank, exitcode", [
    (f"[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] {CMD} exits with return code = -9", None, -9),
    (f"[2024-03-20 20:31:29,269] [ERROR] [launch.py:321:sigkill_handler] {CMD} exits with return code = 1", None, 1),
    ("subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=3']' "
     "died with <Signals.SIGSEGV: 11>.", None, -11),
    ("subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=10', "
     "'--epochs', '0']' returned non-zero exit status 1.", None, 1),
    ("subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=0']' "
     "returned non-zero exit status 1.", 0, 1),
    ("exits with return code = -7", None, -7),
    # closed by a paste's code span or quote
    (f"[2023-04-01 14:17:09,383] [ERROR] [launch.py:324:sigkill_handler] {CMD} exits with return code = -9`", None, -9),
    (f"[2023-04-01 14:17:09,383] [ERROR] [launch.py:324:sigkill_handler] {CMD} exits with return code = 1'.", None, 1),
    # a paste with the command edited out
    ("subprocess.CalledProcessError: Command XXXXX (my script params) died with <Signals.SIGSEGV: 11>.", None, -11),
    ("subprocess.CalledProcessError: Command <redacted> returned non-zero exit status 2.", None, 2),
])
def test_deepspeeds_report_of_a_process_end_is_an_exit(line, local_rank, exitcode):
    parsed = parse_summary_line(line)
    assert (parsed.kind, parsed.value, parsed.training_process) == ("failed", (local_rank, exitcode), True)


@pytest.mark.parametrize("code, words", [
    (-9, "was killed by SIGKILL"),
    (-11, "was killed by SIGSEGV"),
    (-7, "was killed by SIGBUS"),
])
def test_a_process_deepspeed_saw_die_by_a_signal_is_the_crash(run_cli, tmp_path, code, words):
    (tmp_path / "ds_console.txt").write_text(
        HEAD + f"[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] {CMD} exits with return code = {code}\n")
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    # A SIGKILL is worker-killed whichever launcher reports it (its message names the OOM killer);
    # another signal is a crash.
    if code == -9:
        assert report["root_cause"]["rule"] == "worker-killed"
        # `--local_rank=1` is the last process DeepSpeed started, not necessarily the one killed
        assert "local_rank" not in report["root_cause"]["message"]
    else:
        assert report["root_cause"]["rule"] == "crash-before-first-batch"
        assert words in report["root_cause"]["message"]


@pytest.mark.parametrize("end, rule, words", [
    ("died with <Signals.SIGKILL: 9>.", "worker-killed", "(local_rank 0) was killed by SIGKILL"),
    ("returned non-zero exit status 1.", "crash-before-first-batch", "local_rank 0 on "),
])
def test_the_only_process_torch_distributed_launch_started_is_named(run_cli, tmp_path, end, rule, words):
    """torch.distributed.launch with one process a node: the command it quotes, `--local_rank=0`, is
    the failed process's (synthetic line, from `raise subprocess.CalledProcessError(returncode=...,
    cmd=cmd)` as Python words it)."""
    (tmp_path / "launch.log").write_text(
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.8/site-packages/torch/distributed/launch.py", line 260, in main\n'
        "    raise subprocess.CalledProcessError(returncode=process.returncode,\n"
        "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=0', "
        f"'--epochs', '2']' {end}\n")
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == rule
    assert words in report["root_cause"]["message"]


def test_a_failed_process_torch_distributed_launch_quotes_among_several_is_not_named(run_cli, tmp_path):
    """Four processes a node: `--local_rank=3` is the last one started, not the failed one (synthetic
    line, as above): the root cause names no local rank."""
    (tmp_path / "launch.log").write_text(
        "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=3']' "
        "returned non-zero exit status 1.\n")
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert "local_rank" not in report["root_cause"]["message"]
    assert "failed with exit code 1" in report["root_cause"]["message"]


@pytest.mark.parametrize("cut", [
    # cut inside the command, as pastes and search excerpts cut it (two members: a path, a flag list)
    "[2023-05-20 12:09:28,634] [ERROR] [launch.py:434:sigkill_handler] ['/data/anaconda3/envs/x/bin/pyth",
    "[2023-04-07 13:09:33,220] [ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python3', '-u', 'run.py', "
    "'--local_rank=1', '--deepspeed', 'ds.json', '--sav",
    # before its `exits with return code = N` only
    f"[2024-03-20 20:31:29,269] [ERROR] [launch.py:321:sigkill_handler] {CMD} exits with retu",
])
def test_deepspeeds_report_cut_before_its_exit_code_is_still_a_failure(run_cli, tmp_path, cut):
    """DeepSpeed's sigkill_handler begins only its exit report with the command (`{cmd} exits with
    return code = {code}`; its other messages are `Killing subprocess N` and `Main process received
    SIGTERM, exiting`): cut before the code, it still says a process failed (synthetic lines from
    those format strings, cut as pastes and search excerpts cut a long line)."""
    parsed = parse_summary_line(cut)
    assert (parsed.kind, parsed.value, parsed.exitcode_cut) == ("failed", (None, None), True)
    (tmp_path / "ds_console.txt").write_text(HEAD + cut + "\n")
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == "crash-before-first-batch"
    assert "error exit" in report["root_cause"]["message"]
    # no exit code is made up, and the last-started command's local rank names no one
    assert "exit code 1" not in report["root_cause"]["message"]
    assert "local_rank 1" not in report["root_cause"]["message"]


@pytest.mark.parametrize("line", [
    "[2023-04-14 13:11:28,001] [INFO] [launch.py:437:sigkill_handler] Main process received SIGTERM, exiting",
    "[2023-04-14 13:11:27,881] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13268",
])
def test_deepspeeds_other_teardown_messages_are_no_exit_report(line):
    """Its stop on a signal of its own, and its kills, tell no process's failure by themselves."""
    assert parse_summary_line(line) is None


MPI_DETECTED = ("--------------------------------------------------------------------------\n"
                "{launcher} detected that one or more processes exited with non-zero status, thus causing\n"
                "the job to be terminated. The first process to do so was:\n\n"
                "  Process name: [[{job},1],{rank}]\n"
                "  Exit code:    {code}\n"
                "--------------------------------------------------------------------------\n")


@pytest.mark.parametrize("launcher, rank, code", [("mpirun", 3, 1), ("mpiexec", 0, 255)])
def test_open_mpis_report_of_the_first_failed_process_is_its_exit(run_cli, tmp_path, launcher, rank, code):
    """Open MPI's help text (orte/prte errmgr: `%s detected that one or more processes exited with non-zero
    status ... Process name: [[%s,%s],%d] / Exit code: %d`; synthetic lines from it)."""
    (tmp_path / "mpi.log").write_text("step 10 loss 2.3\n" + MPI_DETECTED.format(
        launcher=launcher, job=41293, rank=rank, code=code))
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert f"rank {rank} failed with exit code {code}" in report["root_cause"]["message"]


@pytest.mark.parametrize("launcher", ["mpirun", "prterun"])
def test_open_mpis_report_of_a_signalled_process_is_its_death(run_cli, tmp_path, launcher):
    """`%s noticed that process rank %d with PID %d on node %s exited on signal %d (%s).` (synthetic)."""
    (tmp_path / "mpi.log").write_text(
        f"step 10 loss 2.3\n{launcher} noticed that process rank 1 with PID 0 on node node-2 exited on signal 9 (Killed).\n")
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert "rank 1 was killed by SIGKILL" in report["root_cause"]["message"]


@pytest.mark.parametrize("text", [
    "step 10 loss 2.3\nsummary of the run\n  Exit code:    1\n",
    "step 10 loss 2.3\n  Process name: [[41293,1],3]\nsomething else\nmore\nand more\n  Exit code:    1\n",
])
def test_an_exit_code_line_without_open_mpis_process_name_above_it_is_nothing(run_cli, tmp_path, text):
    (tmp_path / "x.log").write_text(text)
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] != "FAILED"


@pytest.mark.parametrize("text", [
    # help-mpi-api.txt's [mpi-abort] as Open MPI prints it, the errorcode on the next line
    " MPI_ABORT was invoked on rank 2 in communicator MPI COMMUNICATOR 5 DUP FROM 0\nwith errorcode 1.\n\n"
    "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n",
    # the two lines joined (a mailer, a paste)
    "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD with errorcode 1.\n",
])
def test_a_process_that_called_mpi_abort_failed_with_its_errorcode(run_cli, tmp_path, text):
    """Open MPI's help text (ompi/mpi/help-mpi-api.txt, [mpi-abort]: `MPI_ABORT was invoked on rank %d in
    communicator %s` / `with errorcode %d.`; synthetic lines from it)."""
    (tmp_path / "mpi.log").write_text("step 10 loss 2.3\n" + text)
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rank"] == 2 and "exit code 1" in report["root_cause"]["message"]


def test_an_mpi_abort_line_alone_or_an_errorcode_line_alone_is_no_exit():
    assert parse_summary_line("MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD").kind == "mpi-process"
    assert parse_summary_line("with errorcode 1.").kind == "mpi-exit"
    assert parse_summary_line("the job ended with errorcode 1. see above") is None


def test_open_mpis_report_of_a_signalled_process_with_its_pid_blanked_out_is_its_death(run_cli, tmp_path):
    """A paste that blanks out the PID (`with PID xxxxxx`) still names the rank (synthetic, from the
    same format string)."""
    (tmp_path / "mpi.log").write_text("step 10 loss 2.3\nmpirun noticed that process rank 1 with PID xxxxxx on node "
                                      "xxxxxxxx exited on signal 9 (Killed).\n")
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert "rank 1 was killed by SIGKILL" in report["root_cause"]["message"]


# A launcher's word that it could not start a node's command (synthetic lines from the format strings
# in rules/node-not-started.toml: Slurm's step_launch.c, ColossalAI's multinode_runner.py, pdsh, ssh).
NOT_STARTED = {
    "slurm": "srun: error: Task launch for 36.0 failed on node cn131: Job credential expired",
    "colossalai": "Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 --master_addr=10.0.0.1 "
                  "--master_port=29500 train.py on gpu-1648, is localhost: False, exception: No authentication "
                  "methods available",
    "pdsh": "node2: ssh: connect to host node2 port 22: Connection refused\npdsh@node1: node2: ssh exited with exit "
            "code 255",
}
NODE_0_WAITED = ("[E socket.cpp:860] [c10d] The client socket has timed out after 900s while trying to connect to "
                 "(10.0.0.1, 29500).\n")


@pytest.mark.parametrize("launcher", sorted(NOT_STARTED))
def test_a_node_the_launcher_could_not_start_is_the_root_of_the_others_wait(run_cli, tmp_path, launcher):
    (tmp_path / "paste.log").write_text(NOT_STARTED[launcher] + "\n" + NODE_0_WAITED)
    report = json.loads(run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated",
                                "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert root["rule"] == "node-not-started"
    assert ("cn131" if launcher == "slurm" else "gpu-1648" if launcher == "colossalai" else "node2") in root["message"]


def test_colossalai_s_report_of_a_command_that_started_and_failed_is_no_start_failure(run_cli, tmp_path):
    (tmp_path / "paste.log").write_text(
        "Error: failed to run torchrun --nproc_per_node=8 train.py on 10.0.0.2, is localhost: False, exception: "
        "Encountered a bad command exit code!\n")
    report = json.loads(run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated",
                                "--now", POST_MORTEM_NOW).stdout)
    assert all(f["rule"] != "node-not-started" for f in report["findings"])


HOROVOD_DETECTED = ("Horovod detected that one or more processes exited with non-zero status, thus causing the job "
                    "to be terminated. The first process to do so was:\nProcess name: {rank}\nExit code: {code}\n")


@pytest.mark.parametrize("text, rank, words", [
    # each process's end as the runner's thread reports it, the shell's status (137 = 128 + SIGKILL)
    ("Process 0 exit with status code 137.\n", 0, "rank 0 was killed by SIGKILL"),
    ("Process 3 exit with status code 1.\n", 3, "rank 3 failed with exit code 1"),
    # the RuntimeError launch_gloo raises after them, its process named by its rank alone
    ("Traceback (most recent call last):\n"
     '  File "/usr/local/bin/horovodrun", line 8, in <module>\n    sys.exit(run_commandline())\n'
     '  File "/usr/local/lib/python3.8/site-packages/horovod/runner/gloo_run.py", line 290, in launch_gloo\n'
     "    .format(name=name, code=exit_code))\n"
     "RuntimeError: " + HOROVOD_DETECTED.format(rank=2, code=1), 2, "rank 2 failed with exit code 1"),
])
def test_horovods_gloo_runner_report_of_a_process_end_is_its_exit(run_cli, tmp_path, text, rank, words):
    """horovod/runner/gloo_run.py: `print('Process {idx} exit with status code {ec}.')`, idx the slot's
    rank, and `RuntimeError('Horovod detected that one or more processes exited with non-zero status,
    ... The first process to do so was:\\nProcess name: {name}\\nExit code: {code}\\n')`; synthetic
    lines from those format strings."""
    (tmp_path / "hvd.log").write_text("step 10 loss 2.3\n" + text)
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rank"] == rank and words in report["root_cause"]["message"]


@pytest.mark.parametrize("line", ["Process name: 2 of 4", "Process 3 exit with status code", "Process name: worker"])
def test_lines_like_horovods_that_name_no_process_end_are_nothing(line):
    assert parse_summary_line(line) is None


MPI_PRIMARY = ("--------------------------------------------------------------------------\n"
               "Primary job  terminated normally, but 1 process returned\n"
               "a non-zero exit code. Per user-direction, the job has been aborted.\n")


@pytest.mark.parametrize("launcher", ["mpirun", "mpirun.real"])
def test_open_mpis_word_that_a_process_failed_is_one_failure_with_the_block_that_names_it(run_cli, tmp_path, launcher):
    """help-errmgr-base.txt's [normal-termination-but] (`Primary job  terminated normally, but %d process%s
    returned` / `a non-zero exit code. Per user-direction, the job has been aborted.`) before the block
    naming the process; synthetic lines from those texts."""
    (tmp_path / "mpi.log").write_text("step 10 loss 2.3\n" + MPI_PRIMARY + MPI_DETECTED.format(
        launcher=launcher, job=41293, rank=1, code=1))
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED" and report["root_cause"]["rank"] == 1
    assert "rank 1 failed with exit code 1" in report["root_cause"]["message"]
    assert len([f for f in report["findings"] if f["severity"] == "error"]) == 1


@pytest.mark.parametrize("cut", [MPI_PRIMARY, MPI_PRIMARY + "-" * 74 + "\nmpirun.real detected that one or more processes exited with non-zero s\n"])
def test_open_mpis_word_that_a_process_failed_cut_before_which_is_a_failure(run_cli, tmp_path, cut):
    (tmp_path / "mpi.log").write_text("initializing\ninitialized\nexiting!\n" + cut)
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED"
    assert "an error exit" in report["root_cause"]["message"] and "a process" in report["root_cause"]["message"]


def test_open_mpis_word_that_a_process_failed_then_its_signal_names_the_rank(run_cli, tmp_path):
    """[normal-termination-but], then `%s noticed that process rank %d with PID %d on node %s exited on
    signal %d (%s).` (synthetic lines from Open MPI's help texts)."""
    (tmp_path / "mpi.log").write_text("step 10 loss 2.3\n" + MPI_PRIMARY +
                                      "mpirun noticed that process rank 1 with PID 0 on node n2 exited on signal 9 (Killed).\n")
    report = json.loads(run_cli("scan", tmp_path, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    assert report["verdict"] == "FAILED" and report["root_cause"]["rank"] == 1
    assert "rank 1 was killed by SIGKILL" in report["root_cause"]["message"]
