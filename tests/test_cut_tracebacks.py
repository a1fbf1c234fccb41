"""A traceback the log ends inside: its header came and its exception line never did, because a
paste or an excerpt stops there, or the process was killed while writing it. Python prints the
exception line last, so an exception was raised: a failure the lines show, whose line is lost.

The inputs are real logs (import-error-one-rank-prod, node 1: rank 3's ModuleNotFoundError, then
torchrun's own ChildFailedError traceback) cut where a paste would cut them."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES

LINES = (SAMPLES / "import-error-one-rank-prod" / "worker-1" / "launch_ddp.log").read_text().splitlines(keepends=True)
PROCESS_TRACEBACK = next(i for i, line in enumerate(LINES) if line.startswith("Traceback"))
TORCHRUN_TRACEBACK = next(i for i, line in enumerate(LINES) if i > PROCESS_TRACEBACK + 5
                          and line.startswith("Traceback"))


def _report(run_cli, tmp_path, lines: list[str]) -> dict:
    (tmp_path / "paste.log").write_text("".join(lines))
    result = run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated", "--now", POST_MORTEM_NOW)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("cut", [
    pytest.param(lambda: LINES[:PROCESS_TRACEBACK + 2], id="after-a-frame"),
    pytest.param(lambda: LINES[:PROCESS_TRACEBACK + 3], id="after-a-source-line"),
    pytest.param(lambda: LINES[:PROCESS_TRACEBACK + 1], id="at-the-header"),
    pytest.param(lambda: LINES[:PROCESS_TRACEBACK + 1] + ["  Fil"], id="mid-word"),
])
def test_a_log_that_ends_inside_a_processs_traceback_is_a_failure(run_cli, tmp_path, cut):
    report = _report(run_cli, tmp_path, cut())
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "crash-before-first-batch"
    assert "cuts off" in report["root_cause"]["message"]


def test_a_log_that_ends_inside_torchruns_traceback_says_it_was_torchruns(run_cli, tmp_path):
    raised = next(i for i, line in enumerate(LINES) if "raise ChildFailedError(" in line)
    # torchrun's traceback alone, as a paste of its end gives it
    report = _report(run_cli, tmp_path, LINES[:5] + LINES[TORCHRUN_TRACEBACK:raised])
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["message"].startswith("torchrun on ")


def test_a_whole_traceback_is_read_as_before(run_cli, tmp_path):
    report = _report(run_cli, tmp_path, LINES[:PROCESS_TRACEBACK + 5])
    assert "ModuleNotFoundError" in report["root_cause"]["message"]
    assert "cuts off" not in json.dumps(report)


def test_lines_after_the_header_that_are_no_traceback_end_nothing(run_cli, tmp_path):
    """The header with lines after it that are not the traceback's (its exception line under a
    form nothing reads, then the run's own lines): nothing says the log ends inside it."""
    lines = LINES[:PROCESS_TRACEBACK + 3] + ["flash_attn missing, falling back to eager attention\n",
                                             "step 1/30 loss 1.2\n"]
    assert "cuts off" not in json.dumps(_report(run_cli, tmp_path, lines))


@pytest.mark.parametrize("signal_line", [
    # torchrun's agent (api.py, `Received {death_sig} death signal, shutting down workers`), under
    # python logging's default format (torch < 2.2) and under torch's own (2.2 on); synthetic
    "WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n",
    "W1203 07:28:43.671000 19251 torch/distributed/elastic/agent/server/api.py:723] Received Signals.SIGINT "
    "death signal, shutting down workers\n",
])
def test_a_traceback_cut_after_a_signal_from_outside_is_that_stops_consequence(run_cli, tmp_path, signal_line):
    """The process's traceback after torchrun passed it the signal would end in KeyboardInterrupt:
    the stop is the root cause, not the cut exception."""
    cut = ["Traceback (most recent call last):\n", '  File "main.py", line 84, in <module>\n', "    main()\n"]
    report = _report(run_cli, tmp_path, LINES[:5] + ["step 3/30 loss 1.2\n", signal_line] + cut)
    assert report["root_cause"]["rule"] == "stopped-from-outside", report["root_cause"]


def test_torchruns_cut_traceback_after_its_process_failed_leaves_that_failure_the_root(run_cli, tmp_path):
    """torchrun's INFO lines (agent/server/api.py and multiprocessing/api.py format strings, 2.x
    header; synthetic): a process exits 1, the group restarts and rendezvous again, then torchrun's
    own traceback is cut. The process's exit is the failure; the rendezvous after it is a restart's,
    which shows nothing of the run's start."""
    head = "I0213 12:07:20.086000 870572 torch/distributed/elastic/"
    lines = [
        "E0213 12:07:20.086000 870572 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 0 (pid: 876053) of binary: /usr/bin/python3\n",
        head + "agent/server/api.py:889] [default] Worker group FAILED. 3/3 attempts left; will restart worker group\n",
        head + "agent/server/api.py:699] [default] Stopping worker group\n",
        head + "agent/server/api.py:677] [default] Rendezvous'ing worker group\n",
    ]
    torchrun = LINES[TORCHRUN_TRACEBACK:TORCHRUN_TRACEBACK + 6]
    report = _report(run_cli, tmp_path, lines + torchrun)
    root = report["root_cause"]
    assert "exit code 1" in root["message"] and "cuts off" not in root["message"]
    assert "before the first batch" not in root["message"]


def test_a_traceback_still_being_written_while_the_job_runs_is_no_failure_yet(run_cli, tmp_path):
    """A live log read while a process writes its traceback (a sweep or a watch of a running job):
    its exception line is still to come."""
    (tmp_path / "paste.log").write_text("".join(LINES[:PROCESS_TRACEBACK + 2]))
    result = run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated", "--now", POST_MORTEM_NOW,
                     "--job-status", "running")
    report = json.loads(result.stdout)
    assert "cuts off" not in json.dumps(report)


@pytest.mark.parametrize("prefix", ["[rank1]:", ""])
def test_a_log_that_ends_in_frames_whose_header_was_cut_too_is_a_failure(run_cli, tmp_path, prefix):
    """An excerpt cut at both ends: Python's frames (traceback.py's `  File "{}", line {}, in {}`),
    neither header nor exception line. Synthetic frames of a DeepSpeed engine's start-up."""
    frames = ['  File "/opt/deepspeed/runtime/engine.py", line 1251, in _broadcast_model\n',
              "    dist.broadcast(p, groups._get_broadcast_src_rank(), group=self.seq_data_parallel_group)\n",
              '  File "/opt/torch/distributed/distributed_c10d.py", line 2240, in broadcast\n',
              "    work = group.broadcast([tensor], opts)\n"]
    report = _report(run_cli, tmp_path, [prefix + line for line in frames])
    assert report["verdict"] == "FAILED"
    assert "cuts off" in report["root_cause"]["message"]
    assert report["root_cause"]["rank"] == (1 if prefix else None)


@pytest.mark.parametrize("ending", [
    # one frame is no run of them
    ['step 3/30 loss 1.2\n', '  File "/workspace/train.py", line 40, in main\n'],
    # faulthandler's dump (Python/traceback.c: `  File "%U", line %i in %U`, no comma): a thread dump, no raise
    ["Thread 0x00007f (most recent call first):\n", '  File "/workspace/train.py", line 40 in step\n',
     '  File "/workspace/train.py", line 88 in main\n'],
])
def test_a_log_that_ends_in_what_is_no_run_of_pythons_frames_is_not_cut(run_cli, tmp_path, ending):
    assert "cuts off" not in json.dumps(_report(run_cli, tmp_path, ending))


@pytest.mark.parametrize("logged", [
    # c10d's TCPStore client (socket.cpp, 2.0 and 2.1 line numbers): `The client socket has timed out
    # after {}s while trying to connect to ({}, {}).`, logged, then thrown
    "[E socket.cpp:860] [c10d] The client socket has timed out after 1800s while trying to connect to "
    "(store.example, 52533).\n",
    "[E socket.cpp:957] [c10d] The client socket has failed to connect to [store.example]:29500 "
    "(errno: 111 - Connection refused).\n",
])
def test_a_traceback_cut_right_under_c10ds_log_of_the_error_it_raises_is_that_error(run_cli, tmp_path, logged):
    """The line above the cut traceback says what its exception line would have (synthetic lines
    from those format strings; the frames are the sample's)."""
    frames = LINES[PROCESS_TRACEBACK:PROCESS_TRACEBACK + 3]
    report = _report(run_cli, tmp_path, [logged, *frames])
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "hang-in-rendezvous"
    assert "store.example" in report["root_cause"]["message"]
    # nothing shows torchrun here: the store client was the process's own
    assert "torchrun never started" not in report["root_cause"]["message"]


def test_a_wait_logged_well_above_a_cut_traceback_leaves_the_traceback_its_own_failure(run_cli, tmp_path):
    logged = ("[E socket.cpp:860] [c10d] The client socket has timed out after 1800s while trying to connect to "
              "(store.example, 52533).\n")
    frames = LINES[PROCESS_TRACEBACK:PROCESS_TRACEBACK + 3]
    report = _report(run_cli, tmp_path, [logged, "loading data\n", "building model\n", "wrapping the model\n", *frames])
    assert report["root_cause"]["rule"] == "crash-before-first-batch"
    assert "cuts off" in report["root_cause"]["message"]


@pytest.mark.parametrize("between", [
    # NCCL's debug format (`%s:%d:%d [%d] NCCL INFO %s`), printed by its own threads between any lines
    "003eef401da7:619:697 [1] NCCL INFO Channel 00 : 1[101d0] -> 6[a01c0] via P2P/IPC/read\n",
    "node-3:881:905 [2] NCCL INFO comm 0x5581 rank 2 nranks 8 cudaDev 2 busId 201c0 - Init COMPLETE\n",
])
def test_nccls_debug_lines_interleaved_into_the_frames_do_not_hide_the_cut_traceback(run_cli, tmp_path, between):
    """Synthetic frames as above, with NCCL's INFO lines written between them."""
    frames = ['  File "/workspace/dlrm/scripts/dist_main.py", line 221, in main\n',
              "    output = model(numerical_features, categorical_features).squeeze()\n",
              between,
              '  File "/opt/conda/lib/python3.6/site-packages/torch/nn/modules/module.py", line 577, in __call__\n',
              between,
              "    result = self.forward(*input, **kwargs)\n"]
    report = _report(run_cli, tmp_path, frames)
    assert report["verdict"] == "FAILED"
    assert "cuts off" in report["root_cause"]["message"]
