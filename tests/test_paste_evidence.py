"""Issue 28: an explicit error line is a finding wherever it appears, also pasted into a file with
none of torchrun's context (no `DDP launch:` line, no failure summary, no job_status, no env print).

Every line here is built from the format string in torch's (or NCCL's) own source at the releases
named, filled with plausible values; none is copied from a run:

- NCCL watchdog (ProcessGroupNCCL.cpp, `Watchdog caught collective operation timeout: ` << work <<
  ` ran for N milliseconds before timing out.`; operator<< of WorkNCCL): `WorkNCCL(OpType=X,
  TensorShape=[..], Timeout(ms)=N)` / `WorkNCCL(OpType=X, Timeout(ms)=N)` (1.9, 1.10), with
  `SeqNum=N, ` first (1.11, 1.12), `SeqNum, OpType, NumelIn, NumelOut, Timeout(ms)` (1.13 on).
- NCCL errors (ProcessGroupNCCL.cpp / NCCLUtils: `NCCL error in: FILE:LINE, REASON, NCCL version V`,
  REASON from ncclGetErrorString; NCCL's `ncclXxxError: ...` last-error lines).
- THC (aten/src/THC/THCGeneral.cpp, __THCudaCheck, torch <= 1.10): `THCudaCheck FAIL file=%s
  line=%i error=%i : %s`, then _THError's `cuda runtime error (%d) : %s at %s:%d`; c10's
  `CUDA error: %s` (C10_CUDA_CHECK, 1.8 on).
- torchrun's summary rows (elastic/multiprocessing/errors/__init__.py, _FAILURE_FORMAT_TEMPLATE),
  as people paste them: without the frame and the Root Cause header, the pid cut.
- torch.multiprocessing.spawn (spawn.py, ProcessContext.join): `process %d terminated with signal
  %s` / `... with exit code %d` (ProcessExitedException from 1.4, plain Exception before; an
  f-string with `<Unknown signal N>` in 2.x).
"""

from __future__ import annotations

import pytest

from conftest import POST_MORTEM_NOW, paste_report
from logscan.scan.lineparse import parse_exception, parse_summary_line, parse_thc_check

_scan = paste_report


def _rules(report: dict) -> set[str]:
    return {f["rule"] for f in report["findings"]}


# --- 1. collective timeouts -------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # 1.10: no SeqNum
    "[E ProcessGroupNCCL.cpp:566] [Rank 2] Watchdog caught collective operation timeout: "
    "WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1803170 milliseconds before timing out.",
    # 1.10 with an output tensor: TensorShape
    "[E ProcessGroupNCCL.cpp:587] [Rank 2] Watchdog caught collective operation timeout: "
    "WorkNCCL(OpType=ALLREDUCE, TensorShape=[25557032], Timeout(ms)=1800000) ran for 1800456 "
    "milliseconds before timing out.",
    # 1.11/1.12: SeqNum first
    "[E ProcessGroupNCCL.cpp:737] [Rank 2] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1, OpType=BROADCAST, TensorShape=[1], Timeout(ms)=1800000) ran for 1800397 "
    "milliseconds before timing out.",
    # 2.x, as the C++ prefix of 2.4 on puts it
    "[rank2]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, "
    "Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
])
def test_a_pasted_watchdog_timeout_is_a_collective_timeout_of_the_rank_that_waited(run_cli, tmp_path, line):
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    # A `[rank2]:` prefix says processes had started, but nothing shows the job's start: nothing
    # places the wait before the first batch (Job.shows_start_up), so it is the timeout, prefix or not.
    assert report["root_cause"]["rule"] == "collective-timeout"
    timeout = next(f for f in report["findings"] if f["rule"] == report["root_cause"]["rule"])
    assert timeout["ranks"] == [2]
    assert "hang-before-first-batch" not in _rules(report)
    # the excerpt does not say whether training had started: the message does not claim it
    assert "after training had started" not in timeout["message"]


def test_pasted_watchdog_timeouts_at_different_collectives_name_the_rank_behind(run_cli, tmp_path):
    """Two ranks' watchdogs (1.13+ wording): rank 0 waits in collective 8, rank 1 still in 7: the
    rank behind is named, with or without the `[rankN]:` prefixes."""
    lines = [
        f"[rank{r}]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank {r}] Watchdog caught "
        f"collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        f"Timeout(ms)=600000) ran for 600081 milliseconds before timing out."
        for r, seq in ((0, 8), (1, 7))]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert (report["root_cause"]["rule"], report["root_cause"]["rank"]) == ("collective-timeout", 1)
    unprefixed = _scan(run_cli, tmp_path, "\n".join(line.split("]:", 1)[1] for line in lines) + "\n")
    assert (unprefixed["root_cause"]["rule"], unprefixed["root_cause"]["rank"]) == ("collective-timeout", 1)


def _watchdog(rank: int, seq: int) -> str:
    return (f"[E ProcessGroupNCCL.cpp:458] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800456 milliseconds "
            f"before timing out.")


@pytest.mark.parametrize("timeouts", [
    # rank 0 timed out at three collectives (works in flight, or several groups): no order
    ((0, 96117), (0, 96120), (0, 96125), (7, 64088)),
    # numbers far apart count in different process groups
    ((0, 96120), (7, 64088)),
], ids=["several-per-rank", "far-apart"])
def test_watchdog_numbers_of_different_groups_name_no_rank_behind(run_cli, tmp_path, timeouts):
    """SeqNum counts per process group and these lines (1.12 wording, from its format string) do not
    say which group: a rank with several numbers, or numbers thousands apart, order nothing."""
    report = _scan(run_cli, tmp_path, "\n".join(_watchdog(r, seq) for r, seq in timeouts) + "\n")
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert root["rule"] == "collective-timeout"
    assert root["rank"] is None
    assert "waited" in root["message"] and "never" not in root["message"]


# ProcessGroupNCCL's broadcastUniqueNCCLID (1.13 on), from its format string: "[" << rank_ << "] is
# setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key
# '" << key << "', but store->get('" << key << "') got error: " << the store's error. Synthetic.
def _nccl_id(rank: int, error: str) -> str:
    return (f"[{rank}] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
            f"store by key '0', but store->get('0') got error: {error}")


@pytest.mark.parametrize("error", ["Socket Timeout", "wait timeout after 300000ms"])
@pytest.mark.parametrize("dress", ["{}", "[rank{r}]: torch.distributed.DistBackendError: {}"])
def test_a_rank_that_timed_out_waiting_for_rank_0s_nccl_id_names_rank_0(run_cli, tmp_path, error, dress):
    """Rank 1's first collective waited for rank 0 to publish NCCL's id: rank 0 never arrived. Not
    torchrun's rendezvous: the line is a training process's."""
    report = _scan(run_cli, tmp_path, dress.format(_nccl_id(1, error), r=1) + "\n")
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert (root["rule"], root["rank"]) == ("collective-timeout", 0)
    assert "hang-in-rendezvous" not in _rules(report)


def test_a_lost_store_while_fetching_the_nccl_id_is_no_wait_for_rank_0(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, f"[rank3]: torch.distributed.DistBackendError: "
                                      f"{_nccl_id(3, 'Connection reset by peer')}\n")
    assert report["root_cause"]["rule"] == "failure-elsewhere"


# --- 2. NCCL errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, detail", [
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, remote "
     "process exited or there was a network error, NCCL version 2.14.3\n"
     "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
     "prematurely.\n", "remote process exited or there was a network error"),
    ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
     "prematurely.\n", "ncclRemoteError"),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:"
     "275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
     "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
     "error.\n", "unhandled system error"),
    ("RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled cuda error, "
     "NCCL version 2.7.8\n", "unhandled cuda error"),
    ("RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1670525541990/work/torch/csrc/"
     "distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error, NCCL version 2.14.3\n", "internal error"),
    ("ncclInternalError: Internal check failed.\n", "ncclInternalError"),
])
def test_a_pasted_nccl_error_is_an_nccl_error(run_cli, tmp_path, text, detail):
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "nccl-error"
    assert detail in report["root_cause"]["message"]


def test_a_remote_error_beside_the_crash_of_the_rank_that_went_away_is_its_consequence(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, (
        "[rank0]: Traceback (most recent call last):\n"
        "[rank0]:   File \"train.py\", line 40, in <module>\n"
        "[rank0]: ValueError: label 7 out of range\n"
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.19.3\n"))
    assert (report["root_cause"]["rule"], report["root_cause"]["rank"]) == ("crash-before-first-batch", 0)
    assert "nccl-error" not in _rules(report)


# --- 3. CUDA errors ---------------------------------------------------------------------------

THC_FAIL = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=47 error=101 : invalid device ordinal"
THC_RAISE = ("RuntimeError: cuda runtime error (101) : invalid device ordinal at "
             "/pytorch/aten/src/THC/THCGeneral.cpp:47")


@pytest.mark.parametrize("text", [
    THC_FAIL + "\n",
    THC_RAISE + "\n",
    "RuntimeError: CUDA error: invalid device ordinal\n",
    "torch.AcceleratorError: CUDA error: invalid device ordinal\n",
])
def test_a_pasted_invalid_device_ordinal_is_a_crash_with_its_cause(run_cli, tmp_path, text):
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    crash = next(f for f in report["findings"] if f["rule"].startswith("crash-"))
    assert crash["cause"] == "device-ordinal"


def test_a_thcudacheck_line_and_the_raise_it_announces_are_one_failure(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "\n".join([
        "[rank1]: " + THC_FAIL, "[rank1]: Traceback (most recent call last):",
        "[rank1]:   File \"train.py\", line 12, in <module>",
        "[rank1]:     torch.cuda.set_device(args.local_rank)", "[rank1]: " + THC_RAISE]) + "\n")
    crashes = [f for f in report["findings"] if f["rule"].startswith("crash-")]
    assert len(crashes) == 1 and crashes[0]["rank"] == 1 and crashes[0]["cause"] == "device-ordinal"
    unranked = _scan(run_cli, tmp_path, f"{THC_FAIL}\nTraceback (most recent call last):\n"
                                        f"  File \"train.py\", line 12, in <module>\n{THC_RAISE}\n")
    assert len([f for f in unranked["findings"] if f["rule"].startswith("crash-")]) == 1


def test_thcudacheck_is_read_as_the_exception_therror_raises():
    assert parse_thc_check(THC_FAIL) == ("RuntimeError", THC_RAISE.split(": ", 1)[1])
    assert parse_thc_check(
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=278 error=1 : "
        "invalid argument") == ("RuntimeError", "cuda runtime error (1) : invalid argument at "
                                "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:278")
    # the warning variant only warns
    assert parse_thc_check("THCudaCheckWarn FAIL file=x.cpp line=3 error=2 : out of memory") is None


# A CUDA error told only on a C++ line (ProcessGroupNCCL.cpp, ncclCommWatchdog, and std::terminate's
# `what():` of an uncaught c10::Error), per release; synthetic lines from the format strings.
WATCHDOG_CUDA = [
    # <= 2.1: LOG(ERROR) << "[Rank " << rank_ << "] NCCL watchdog thread terminated with exception: " << e.what()
    "[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: "
    "CUDA error: an illegal memory access was encountered",
    # 2.2, 2.3: logPrefix() << "NCCL watchdog thread terminated with exception: " << e.what()
    "[rank1]:[E ProcessGroupNCCL.cpp:1182] [PG 0 Rank 1] NCCL watchdog thread terminated with exception: "
    "CUDA error: unspecified launch failure",
    # 2.4 on: logPrefix() << "Process group watchdog thread terminated with exception: " << e.what()
    "[rank1]:[E1130 10:02:03.123456789 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
    "Process group watchdog thread terminated with exception: CUDA error: device-side assert triggered",
    "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: misaligned address",
]


@pytest.mark.parametrize("text", WATCHDOG_CUDA)
def test_a_cuda_error_told_only_by_the_watchdog_or_terminate_is_a_crash(run_cli, tmp_path, text):
    report = _scan(run_cli, tmp_path, text + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    crash = next(f for f in report["findings"] if f["rule"].startswith("crash-"))
    assert "CUDA error: " in crash["message"]
    if text.startswith("[rank1]"):
        assert crash["rank"] == 1


def test_a_pasted_cuda_error_of_another_kind_is_a_crash(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == "crash-before-first-batch"


# --- 4. torchrun's summary rows pasted alone --------------------------------------------------

@pytest.mark.parametrize("text", [
    "exitcode  : -9 (SIGKILL)\n",
    "  exitcode  : -9 (SIGKILL)\n",
    "traceback : Signal 9 (SIGKILL) received by PID 12345\n",
    "exitcode  : -9 (SIGKILL)\ntraceback : Signal 9 (SIGKILL) received by PID 12345\n",
    "  exitcode: -9 (pid: 12345)\n",  # 1.9's unpadded row
])
def test_a_pasted_sigkill_row_is_worker_killed(run_cli, tmp_path, text):
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "worker-killed"
    assert "?" not in report["root_cause"]["message"]


# --- 5. torch.multiprocessing.spawn -----------------------------------------------------------

@pytest.mark.parametrize("line, local_rank, exitcode", [
    ("torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL", 0, -9),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code 1", 1, 1),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGSEGV", 3, -11),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 2 terminated with signal "
     "<Unknown signal 40>", 2, -40),
    ("Exception: process 0 terminated with signal SIGKILL", 0, -9),  # before 1.4
])
def test_spawns_report_of_a_process_end_is_an_exit(line, local_rank, exitcode):
    parsed = parse_summary_line(line)
    assert (parsed.kind, parsed.value) == ("failed", (local_rank, exitcode))


def test_a_process_spawn_saw_killed_by_sigkill_is_worker_killed_not_an_exception(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "Traceback (most recent call last):\n"
                   "  File \"train.py\", line 90, in <module>\n"
                   "    mp.spawn(main, nprocs=4)\n"
                   "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL\n")
    assert report["root_cause"]["rule"] == "worker-killed"
    assert "local_rank 0" in report["root_cause"]["message"]
    assert not [f for f in report["findings"] if "raised" in f["message"]]


@pytest.mark.parametrize("line, words", [
    ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with exit code 1",
     "failed with exit code 1"),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGSEGV",
     "was killed by SIGSEGV"),
])
def test_a_process_spawn_saw_exit_is_a_crash_told_by_its_exit(run_cli, tmp_path, line, words):
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED"
    assert words in report["root_cause"]["message"]
    assert "ProcessExitedException" not in report["root_cause"]["message"]


# --- 6. interleaved tracebacks ----------------------------------------------------------------

HEADER = "Traceback (most recent call last):"
INTERLEAVED = "".join(a + b for a, b in zip(HEADER, HEADER))


@pytest.mark.parametrize("glued", [HEADER, INTERLEAVED, INTERLEAVED[:30] + "\n" + INTERLEAVED[30:]])
@pytest.mark.parametrize("exception", ["RuntimeError: boom on rank 1", "ValueError: bad value on rank 0"])
def test_an_exception_behind_another_ranks_traceback_header_is_found(run_cli, tmp_path, glued, exception):
    report = _scan(run_cli, tmp_path, f"{INTERLEAVED}\n  File \"train.py\", line 10, in <module>\n"
                                      f"{glued}{exception}\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert exception in report["root_cause"]["message"]


def test_a_line_that_only_mentions_an_error_after_a_header_fragment_is_read_as_before():
    assert parse_exception(HEADER + "RuntimeError: boom") == ("RuntimeError", "boom")
    assert parse_exception(INTERLEAVED + "ValueError: bad") == ("ValueError", "bad")
    assert parse_exception("see the call last): it is fine") is None


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "THCudaCheck FAIL file= line= error= : \n",
    "THCudaCheck FAIL file=x line=1 error=99999999999999999999 : invalid device ordinal\n",
    "torch.multiprocessing.spawn.ProcessExitedException: process 99999999999999999999 terminated with signal SIGKILL\n",
    "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGNOPE\n",
    "exitcode  : -9 (SIGKILL" + ")" * 5000 + "\n",
    INTERLEAVED * 200 + "RuntimeError: x\n",
])
def test_damaged_paste_lines_give_a_diagnosis_never_a_traceback(run_cli, tmp_path, text):
    (tmp_path / "paste.log").write_text(text)
    result = run_cli("scan", tmp_path / "paste.log", "--isolated", "--now", POST_MORTEM_NOW)
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output.replace(INTERLEAVED, "").replace(HEADER, "")


# A launcher's report of a process's non-zero exit names its local rank; pasted without the launch
# shape, no global rank is known, and the crash still says which process of the node it was.
# Synthetic lines from the format strings: torchrun's api.py (`failed (exitcode: %s) local_rank: %s
# (pid: %s) of binary: %s`, logging's 1.x prefix and glog's 2.x), DeepSpeed's launch.py
# sigkill_handler (`%s exits with return code = %s`, the command holding `--local_rank=N`: the last
# process it spawned, so the failed one's only when N is 0, a node of one process), and mp.spawn's
# ProcessExitedException (`process %d terminated with exit code %d`).
LOCAL_RANK_EXITS = [
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3 (pid: 4242) "
     "of binary: /usr/bin/python3", 3),
    ("E1129 18:49:07.441000 4715 torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: 2) "
     "local_rank: 1 (pid: 4750) of binary: /opt/venv/bin/python", 1),
    ("[2026-11-29 18:49:07,441] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', "
     "'--local_rank=0', '--deepspeed'] exits with return code = 1", 0),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 2 terminated with exit code 1", 2),
]


@pytest.mark.parametrize("line, local_rank", LOCAL_RANK_EXITS)
def test_a_pasted_exit_names_the_local_rank_its_launcher_reported(run_cli, tmp_path, line, local_rank):
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert f"local_rank {local_rank} on " in report["root_cause"]["message"]


# mp.spawn re-raises a process's exception in the parent (spawn.py, ProcessContext.join): message
# "\n\n-- Process %d terminated with the following error:\n" + the process's traceback, raised as
# ProcessRaisedException (1.8 on) or a plain Exception (before). Synthetic, from that format.
SPAWN_PARENT = ['Traceback (most recent call last):',
                '  File "main.py", line 40, in <module>',
                '    mp.spawn(main_worker, nprocs=4, args=(args,))',
                '  File "/usr/lib/python3/site-packages/torch/multiprocessing/spawn.py", line 150, in join',
                '    raise ProcessRaisedException(msg, error_index, failed_process.pid)']
SPAWN_QUOTED = ['Traceback (most recent call last):',
                '  File "/usr/lib/python3/site-packages/torch/multiprocessing/spawn.py", line 59, in _wrap',
                '    fn(i, *args)',
                '  File "/work/main.py", line 77, in main_worker',
                '    batch = next(loader)',
                "KeyError: 'label'"]


@pytest.mark.parametrize("raised", ["torch.multiprocessing.spawn.ProcessRaisedException:", "Exception:"])
def test_the_exception_mp_spawn_quotes_is_the_process_s_failure(run_cli, tmp_path, raised):
    lines = SPAWN_PARENT + [raised, "", "-- Process 2 terminated with the following error:"] + SPAWN_QUOTED
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert "KeyError: 'label'" in root["message"] and "local_rank 2 on " in root["message"]
    assert [f["rule"] for f in report["findings"] if f["rule"].startswith("crash-")] == [root["rule"]]


def test_mp_spawn_s_quote_cut_before_its_exception_still_names_the_process(run_cli, tmp_path):
    lines = SPAWN_PARENT + ["torch.multiprocessing.spawn.ProcessRaisedException:", "",
                            "-- Process 1 terminated with the following error:"] + SPAWN_QUOTED[:3]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert "local_rank 1 on " in report["root_cause"]["message"]


# A report that leaves out what a message names reads without it, never with a "?": TCPStore's
# `Address already in use` before 1.11 names no port (synthetic lines, from torch's and DDP's
# own messages), DDP's reduction error names no parameter unless TORCH_DISTRIBUTED_DEBUG is set,
# and a pasted line has no rank.
@pytest.mark.parametrize("text, rule", [
    ("RuntimeError: Address already in use\n", "port-in-use"),
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
     "This error indicates that your module has parameters that were not used in producing loss.\n",
     "ddp-unused-parameters"),
])
def test_a_message_reads_without_what_its_line_did_not_say(run_cli, tmp_path, text, rule):
    report = _scan(run_cli, tmp_path, text)
    assert report["root_cause"]["rule"] == rule
    assert "?" not in report["root_cause"]["message"]


def test_several_ranks_killed_by_one_signal_read_in_the_plural(run_cli, tmp_path):
    rows = []
    for rank in (0, 1):
        rows += [f"[{rank}]:", "  time      : 2026-11-29_18:49:07", "  host      : job-worker-0",
                 f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : -6 (pid: {4750 + rank})",
                 "  error_file: <N/A>", f"  traceback : Signal 6 (SIGABRT) received by PID {4750 + rank}"]
    report = _scan(run_cli, tmp_path, "\n".join(["Root Cause (first observed failure):"] + rows) + "\n")
    assert "ranks 0, 1 all were killed by SIGABRT" in report["root_cause"]["message"]


@pytest.mark.parametrize("restart", [
    "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will restart "
    "worker group",
    "I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:889] [default] Worker group FAILED. "
    "2/3 attempts left; will restart worker group",
])
def test_a_paste_that_stops_after_torchrun_restarted_its_group_says_so(run_cli, tmp_path, restart):
    """torchrun's agent (agent/server/api.py: `[{role}] Worker group {state}. {remaining}/{max} attempts
    left; will restart worker group`, synthetic, 1.9 and 2.x headers): an attempt failed, the next one's
    outcome is cut off. Neither healthy nor a failure the lines name."""
    report = _scan(run_cli, tmp_path, restart + "\n" + restart.split("[default]")[0]
                   + "[default] Rendezvous'ing worker group\n")
    assert report["verdict"] == "INCONCLUSIVE"
    assert "restarted its worker group after a failure" in report["verdict_reason"]



# --- lines a paste cut short -----------------------------------------------------------------
# Each built from its format string (torchrun's multiprocessing/api.py failed line, ProcessGroupNCCL's
# watchdog line, Open MPI's opal/util/stacktrace.c, UCX's ucs/debug/debug.c, torchrun's
# ChildFailedError report), cut where an excerpt or a paste cuts them. Synthetic.

@pytest.mark.parametrize("line, rule, told", [
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 1",
     "crash-before-first-batch", "SIGABRT"),
    ("E1203 07:08:46.995000 6449 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) "
     "local_rank: 1", "crash-before-first-batch", "SIGABRT"),
    ("[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=",
     "collective-timeout", "timed out"),
    ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation "
     "timeout", "collective-timeout", "timed out"),
])
def test_a_line_cut_short_still_tells_its_failure(run_cli, tmp_path, line, rule, told):
    """torchrun's failed line cut after its local rank, the watchdog's cut after its sentence."""
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == rule and told in report["root_cause"]["message"]


@pytest.mark.parametrize("lines", [
    ["[node-1:02519] *** Process received signal ***", "[node-1:02519] Signal: Segmentation fault (11)",
     "[node-1:02519] Signal code: Address not mapped (1)"],
    ["[1733212121.123456] [node-1:2519 :0]      debug.c:1289 UCX  ERROR Caught signal 11 (Segmentation fault: "
     "address not mapped to object at address 0x440000e9)"],
    # Abseil's failure signal handler (`*** %s received at time=%ld%s ***`), by name and by number
    ["(RayTrainWorker pid=7315) *** SIGSEGV received at time=1734086759 on cpu 3 ***",
     "(RayTrainWorker pid=7315) PC: @        0x19ea96600  (unknown)  __pthread_kill"],
    ["*** Signal 11 received at time=1734086759 ***"],
    # glog's (`*** SIGSEGV (@0x0) received by PID %d (TID 0x%x) from PID %d; stack trace: ***`)
    ["*** SIGSEGV (@0x0) received by PID 4242 (TID 0x7f3c) from PID 0; stack trace: ***"],
], ids=["open-mpi", "ucx", "absl-name", "absl-number", "glog"])
def test_a_processs_own_report_of_a_fatal_signal_is_its_death_by_it(run_cli, tmp_path, lines):
    """Synthetic lines from each handler's format string."""
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert "SIGSEGV" in report["root_cause"]["message"]


@pytest.mark.parametrize("line", ["a packet received at time=1734086759 from node 3",
                                  "*** SIGNAL received at time=1 ***", "the *** SIGSEGV received at time=1 *** note"])
def test_lines_like_a_signal_handlers_banner_are_no_death(line):
    from logscan.scan.lineparse import parse_summary_line

    assert parse_summary_line(line) is None


@pytest.mark.parametrize("rule, head", [("=" * 60, "Failures:"), ("*" * 40, "Root Cause:")],
                         ids=["1.10-on", "1.9"])
def test_torchruns_child_failed_error_with_its_report_cut_is_a_failure(run_cli, tmp_path, rule, head):
    """The report's frame in 1.10 on (`=` rules, `Failures:` first) and in 1.9 (`*` rules, `Root
    Cause:` first), cut after its first heading."""
    lines = ["Traceback (most recent call last):",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 250, '
             "in launch_agent", "    raise ChildFailedError(",
             "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
             rule, "train.py FAILED", "-" * len(rule), head, "[1]:"]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert "ChildFailedError" in report["root_cause"]["message"]


def test_a_cut_traceback_gives_way_to_an_explicit_error_beside_it(run_cli, tmp_path):
    lines = ["[rank2]: Traceback (most recent call last):",
             '[rank2]:   File "/workspace/train.py", line 88, in <module>',
             "[rank3]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
             "NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.21.5",
             '[rank2]:   File "/workspace/train.py", line 60, in step']
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["root_cause"]["rank"] == 3


@pytest.mark.parametrize("header", ["WARNING:torch.distributed.elastic.multiprocessing.api:",
                                    "W1203 07:08:46.962000 6449 torch/distributed/elastic/multiprocessing/api.py:1028] "])
def test_a_paste_of_torchrun_stopping_its_processes_alone_says_what_it_can(run_cli, tmp_path, header):
    """torchrun's `Sending process %s closing signal %s` (multiprocessing/api.py, synthetic, 1.x and 2.x
    headers) comes after one of its processes failed or after it was stopped itself."""
    text = "".join(f"{header}Sending process {pid} closing signal SIGTERM\n" for pid in (2024640, 2024641))
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "INCONCLUSIVE"
    assert "the launcher stopped its processes" in report["verdict_reason"]



# --- a death by signal in other words ---------------------------------------------------------
# Synthetic, from each format: bash's job status (`%s: line %d: %5d %s %s`, strsignal's words padded),
# Ray's task wrapper (`RayTaskError(<cause class>): ray::<task>() (pid=..., ip=...)`), mp.spawn's
# `Terminating process %s via signal SIGTERM` (2.2 on), ProcessGroupNCCL's HeartbeatMonitor (2.4 on).

@pytest.mark.parametrize("line, signal", [
    ("pretrain.sh: line 184: 2324239 Aborted                 (core dumped) litgpt pretrain --config a.yaml",
     "SIGABRT"),
    ("run.sh: line 9:  4242 Segmentation fault      python train.py --bs 8", "SIGSEGV"),
])
def test_the_shells_report_of_a_training_command_a_signal_ended_is_its_death(run_cli, tmp_path, line, signal):
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED" and signal in report["root_cause"]["message"]


@pytest.mark.parametrize("line", ["launch_ddp.sh: line 21: 17202 Segmentation fault      torchrun train.py",
                                  "job.sh: line 5: 99 Killed                  bash launch_ddp.sh"])
def test_the_shells_report_of_a_launcher_a_signal_ended_is_no_training_process(run_cli, tmp_path, line):
    """torchrun's own crash is told as torchrun's, never as a training process's."""
    report = _scan(run_cli, tmp_path, line + "\n")
    assert all(f["message"].startswith("torchrun on ") for f in report["findings"] if f["rule"].startswith("crash-"))


@pytest.mark.parametrize("cause", ["OutOfMemoryError", "RuntimeError"])
def test_a_ray_task_error_carrying_its_cause_is_an_exception(run_cli, tmp_path, cause):
    report = _scan(run_cli, tmp_path, f"ray.exceptions.RayTaskError({cause}): "
                                      "ray::WorkerDict.actor_rollout_ref_update_actor() (pid=118848, ip=10.0.0.1)\n")
    assert report["verdict"] == "FAILED"
    assert f"RayTaskError({cause})" in report["root_cause"]["message"]


def test_mp_spawn_terminating_its_processes_says_one_of_them_failed(run_cli, tmp_path):
    """spawn.py's join terminates the processes still alive only after one exited with an error."""
    report = _scan(run_cli, tmp_path, "W1203 07:08:46.962000 6449 torch/multiprocessing/spawn.py:145] Terminating "
                                      "process 25365 via signal SIGTERM\n")
    assert report["verdict"] == "FAILED"
    assert "torch.multiprocessing.spawn" in report["root_cause"]["message"]


def test_the_watchdog_stuck_is_a_timeout(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "[rank6]:[E429 14:03:49.123456789 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID "
                   "0(default_pg) Rank 6] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making "
                   "progress in monitoring enqueued collectives.\n")
    assert report["verdict"] == "FAILED" and report["root_cause"]["rule"] == "collective-timeout"


@pytest.mark.parametrize("prefix", ["(main_task pid=1748945) ", "2026-12-03 08:40:01,123\tERROR worker.py:409 -- "])
def test_a_ray_tasks_unhandled_error_is_its_exception(run_cli, tmp_path, prefix):
    """ray/_private/worker.py's `Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): {}`
    with a RayTaskError's text, under Ray's `(name pid=N)` prefix or its own logging header, then the
    remote traceback without its header (synthetic)."""
    lines = [prefix + "Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): "
             "ray::WorkerDict.generate_sequences() (pid=1751030, ip=10.0.0.1, actor_id=d2209bc23)",
             prefix + '  File "/verl/workers/fsdp_workers.py", line 463, in generate_sequences',
             prefix + "    with self.rollout_sharding_manager:"]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert "RayTaskError" in report["root_cause"]["message"]


def test_deepspeeds_launcher_killing_its_subprocesses_alone_says_the_launcher_stopped_them(run_cli, tmp_path):
    """DeepSpeed's sigkill_handler (`Killing subprocess %d`, synthetic) runs after a process failed or
    when the launcher was stopped: the lines after it would say which."""
    text = "".join(f"[2023-04-14 13:11:27,879] [INFO] [launch.py:428:sigkill_handler] Killing subprocess {pid}\n"
                   for pid in (13266, 13267))
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "INCONCLUSIVE"
    assert "the launcher stopped its processes" in report["verdict_reason"]


@pytest.mark.parametrize("detail, shown", [
    (" Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. "
     "End of file. There are some potential root causes.", "connection error code 2"),
    ("", "a worker died or was killed"),
])
def test_a_ray_workers_death_its_raylet_logs_is_a_failure(run_cli, tmp_path, detail, shown):
    """The raylet's report of a worker that died under a task (synthetic, from its wording), with and
    without its exit detail: Ray raises it to the caller as WorkerCrashedError."""
    line = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
            "troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffff Worker ID: fa30 Node "
            "ID: 077b Worker IP address: 10.0.0.1 Worker port: 10245 Worker PID: 3566775" + detail)
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED"
    assert "WorkerCrashedError" in report["root_cause"]["message"] and shown in report["root_cause"]["message"]


WATCHDOG_FRAMES = (
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f6aa9ca0446 in {lib}/libc10.so)\n"
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
    "std::ratio<1l, 1000l> > >) + 0x282 (0x7f6aaafa5672 in {lib}/libtorch_cuda.so)\n"
    "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f6aaafacab3 in {lib}/libtorch_cuda.so)\n"
    "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7f6aaafae51d in {lib}/libtorch_cuda.so)\n")


@pytest.mark.parametrize("text", [
    WATCHDOG_FRAMES.format(lib="/usr/lib/python3.10/site-packages/torch/lib"),
    "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent "
    "call first):\n" + WATCHDOG_FRAMES.format(lib="/opt/conda/lib/python3.11/site-packages/torch/lib"),
])
def test_the_watchdogs_timeout_told_by_its_stack_alone_is_a_collective_timeout(run_cli, tmp_path, text):
    """The message lost, the frames kept (c10's backtrace of an error built in WorkNCCL::checkTimeout,
    which builds one only for a timed-out work; lines from c10's `Exception raised from %s at %s:%d
    (most recent call first):` and its `frame #%d: ...` format, as torch 2.x prints them)."""
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED" and report["root_cause"]["rule"] == "collective-timeout"


def test_the_watchdogs_frames_without_checktimeout_are_no_timeout(run_cli, tmp_path):
    """The watchdog thread's own frames stand under any error it rethrows (an NCCL error too)."""
    report = _scan(run_cli, tmp_path, WATCHDOG_FRAMES.format(lib="/usr/lib/torch/lib").replace(
        "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        "std::ratio<1l, 1000l> > >)", "c10d::ProcessGroupNCCL::WorkNCCL::isCompleted()"))
    assert report["root_cause"] is None or report["root_cause"]["rule"] != "collective-timeout"


@pytest.mark.parametrize("line", [
    "Error executing job with overrides: []\n",
    "2025-07-31T08:28:47.911109392Z Error executing job with overrides: ['algorithm.adv_estimator=grpo', "
    "'data.train_files=/data/train.parquet', 'trainer.n_gpus_per_node=8']\n",
])
def test_hydras_word_that_its_job_raised_is_a_failure(run_cli, tmp_path, line):
    """Hydra (hydra/core/utils.py, JobReturn.return_value) writes `Error executing job with overrides:
    {overrides}` when the task function raised (synthetic lines from that format string)."""
    progress = "Training Progress:   1%|          | 1/108 [16:49<30:00:53, 1009.85s/it]\n"
    report = _scan(run_cli, tmp_path, progress + line)
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "crash-during-training"
    assert "Hydra" in report["root_cause"]["message"]


def test_hydras_word_gives_way_to_the_exception_it_reports(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "Error executing job with overrides: []\n"
                   "Traceback (most recent call last):\n"
                   '  File "/app/main.py", line 12, in main\n'
                   "    raise FileNotFoundError(path)\n"
                   "FileNotFoundError: /data/train.parquet\n"
                   "\nSet the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n")
    assert report["verdict"] == "FAILED"
    assert "FileNotFoundError" in report["root_cause"]["message"]
    assert len([f for f in report["findings"] if f["severity"] == "error"]) == 1


def test_hydras_words_quoted_in_a_message_are_no_failure(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "step 3/100 loss 2.1\n"
                   "INFO note: grep for 'Error executing job with overrides: [' when a run dies\n")
    assert report["verdict"] != "FAILED"


KEEP_ALIVE = ("The node 'node-b_3427_0' has failed to send a keep-alive heartbeat to the rendezvous 'job7' "
              "due to an error of type {error}.")


@pytest.mark.parametrize("dress", [
    ("WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:",
     "WARNING:torch.distributed.elastic.multiprocessing.api:"),
    ("W0813 22:23:32.979031 140204091807488 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1267] ",
     "W0813 22:23:33.101000 140204091807488 torch/distributed/elastic/multiprocessing/api.py:897] "),
])
def test_torchrun_losing_the_rendezvous_store_while_its_processes_run_is_a_failure(run_cli, tmp_path, dress):
    """dynamic_rendezvous's _keep_alive (`The node '{node}' has failed to send a keep-alive heartbeat to
    the rendezvous '{run_id}' due to an error of type {type(ex).__name__}.`), then the agent stopping its
    processes (`Sending process %s closing signal %s`): synthetic lines in torch 1.10's and 2.4's dress."""
    rendezvous, api = dress
    report = _scan(run_cli, tmp_path, rendezvous + KEEP_ALIVE.format(error="RendezvousConnectionError") + "\n"
                   + api + "Sending process 3494 closing signal SIGTERM\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "failure-elsewhere"
    assert "rendezvous store" in report["root_cause"]["message"]


def test_a_keep_alive_that_only_timed_out_is_no_lost_store(run_cli, tmp_path):
    """A late heartbeat (RendezvousTimeoutError) is often recovered from: no word of a lost store."""
    report = _scan(run_cli, tmp_path, "Start running basic DDP example on rank 0.\n"
                   + KEEP_ALIVE.format(error="RendezvousTimeoutError") + "\n")
    assert report["verdict"] != "FAILED"


def test_a_lost_store_after_a_signal_from_outside_is_that_stop(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path,
                   "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\n"
                   + KEEP_ALIVE.format(error="RendezvousConnectionError") + "\n"
                   "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3494 closing signal SIGTERM\n")
    assert report["root_cause"]["rule"] == "stopped-from-outside"


@pytest.mark.parametrize("line", [
    "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated "
    "after dumping debug info. workMetaList_.size()=1\n",
    "[rank1]:[F429 14:03:49.123456789 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
    "ProcessGroupNCCL's watchdog got stuck for 600 seconds without making progress in monitoring enqueued "
    "collectives.\n",
])
def test_the_heartbeat_monitors_word_alone_says_the_watchdog_got_stuck(run_cli, tmp_path, line):
    """The heartbeat monitor (ProcessGroupNCCL.cpp, 2.2's `Heartbeat monitor timed out!` and 2.4's
    `ProcessGroupNCCL's watchdog got stuck for %d seconds ...`; synthetic lines) ends a process whose
    watchdog stopped moving: not told as an ordinary collective timeout."""
    report = _scan(run_cli, tmp_path, line)
    assert report["root_cause"]["rule"] == "collective-timeout"
    assert "watchdog got stuck" in report["root_cause"]["message"]
    assert "rank 1" in report["root_cause"]["message"]


def test_a_collective_timeout_beside_the_heartbeat_monitor_is_told_as_one(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path,
                   "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will "
                   "be terminated after dumping debug info.\n"
                   "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: "
                   "WorkNCCL(SeqNum=305, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 "
                   "milliseconds before timing out.\n")
    assert "a collective timed out" in report["root_cause"]["message"]


@pytest.mark.parametrize("line", [
    "  what():  NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:181, unhandled cuda error, "
    "NCCL version 21.0.3\n",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n",
])
def test_nccls_unhandled_cuda_error_points_at_the_gpu_not_the_network(run_cli, tmp_path, line):
    """ncclGetErrorString(ncclUnhandledCudaError) in torch's `NCCL error in: %s:%d, %s, NCCL version %s`
    (1.x and 2.x wordings; synthetic lines)."""
    report = _scan(run_cli, tmp_path, line)
    root = report["root_cause"]
    assert root["rule"] == "nccl-error" and root["cause"] == "cuda-fault"
    assert "CUDA call inside NCCL" in root["hint"] and "network" not in root["hint"]


FAULT_DUMP = ("Fatal Python error: {name}\n\n"
              "Current thread 0x00007fa0f49c0b80 (most recent call first):\n"
              '  File "{path}", line 31 in {function}\n')


@pytest.mark.parametrize("name, signal", [("Segmentation fault", "SIGSEGV"), ("Aborted", "SIGABRT"),
                                          ("Bus error", "SIGBUS")])
def test_faulthandlers_report_of_a_training_processs_fatal_signal_is_its_death(run_cli, tmp_path, name, signal):
    """faulthandler.c's `Fatal Python error: ` + its table's name of the signal, then each thread's
    stack as `  File "%s", line %d in %s` (synthetic lines from that format)."""
    report = _scan(run_cli, tmp_path, "step 10 loss 2.3\n"
                   + FAULT_DUMP.format(name=name, path="/workspace/train.py", function="train_step"))
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "crash-during-training"
    assert signal in report["root_cause"]["message"]


def test_faulthandlers_dump_of_torchruns_own_stack_is_no_training_process(run_cli, tmp_path):
    """torchrun itself dying (torch 1.11's exit-barrier segfault under Python 3.10): its agent's frames
    follow the report, and it is told as torchrun's death, no training process's."""
    report = _scan(run_cli, tmp_path, FAULT_DUMP.format(
        name="Segmentation fault", function="_exit_barrier",
        path="/opt/venv/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py"))
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert root["message"].startswith("torchrun on ") and "SIGSEGV" in root["message"]
    # its exit barrier, entered once every process exited 0: after training
    assert root["rule"] == "crash-during-training" and "in its exit barrier" in root["message"]


def test_faulthandlers_report_and_torchruns_of_the_same_process_are_one_exit(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, FAULT_DUMP.format(name="Segmentation fault", path="/app/train.py",
                                                        function="main")
                   + "E0909 14:03:50.013000 22579342468928 torch/distributed/elastic/multiprocessing/api.py:833] "
                     "failed (exitcode: -11) local_rank: 0 (pid: 2128869) of binary: /usr/bin/python\n")
    assert "local_rank 0" in report["root_cause"]["message"]
    assert len([f for f in report["findings"] if f["severity"] == "error"]) == 1


def test_the_real_runs_agent_losing_its_store_pasted_alone_is_that_failure(run_cli, tmp_path):
    """Node 1's torchrun lines of the real rdzv-c10d-master-lost-prod run (node 0, the store's host, was
    SIGKILLed): its keep-alive failing with RendezvousConnectionError, then its SIGTERMs, pasted without
    the processes' lines around them."""
    from conftest import SAMPLES
    lines = (SAMPLES / "rdzv-c10d-master-lost-prod" / "worker-1" / "launch_ddp.log").read_text().splitlines()
    keep_alive = next(line for line in lines if "keep-alive heartbeat" in line)
    stops = [line for line in lines if "closing signal SIGTERM" in line]
    report = _scan(run_cli, tmp_path, "\n".join([keep_alive, *stops]) + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "failure-elsewhere"
    assert "lost the rendezvous store" in report["root_cause"]["message"]


@pytest.mark.parametrize("line, rank", [
    # WorkNCCL::synchronize under TORCH_NCCL_BLOCKING_WAIT=1 (2.x): logPrefix() + "Work " + work + " timed
    # out in blocking wait"; 1.x appends `(NCCL_BLOCKING_WAIT=1).`
    ("[rank4]:[E601 07:25:57.393526823 ProcessGroupNCCL.cpp:756] [Rank 4] Work WorkNCCL(SeqNum=201809, "
     "OpType=BROADCAST, NumelIn=32, NumelOut=32, Timeout(ms)=10800000) timed out in blocking wait.", 4),
    ("[E ProcessGroupNCCL.cpp:566] [Rank 1] Work WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=60000) "
     "timed out in blocking wait (NCCL_BLOCKING_WAIT=1).", 1),
    # torch 2.4+'s watchdog summary (logPrefix() + `Timeout at NCCL work: %d, last enqueued NCCL work: %d,
    # last completed NCCL work: %d.`), which a paste keeps when the long sentence before it is lost
    ("[rank1]:[E114 16:14:58.306997582 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1] Timeout at "
     "NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.", 1),
    ("[E1201 10:00:00.000000000 ProcessGroupNCCL.cpp:1590] [PG 0 Rank 3] Timeout at NCCL work: 412, last enqueued "
     "NCCL work: 413, last completed NCCL work: 411.", 3),
])
def test_other_wordings_of_a_collective_timeout_name_the_rank_that_waited(run_cli, tmp_path, line, rank):
    """Synthetic lines from those format strings."""
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["root_cause"]["rule"] == "collective-timeout"
    assert f"rank {rank} waited" in report["root_cause"]["message"]


@pytest.mark.parametrize("state, healthy", [("SUCCEEDED", True), ("AppState.SUCCEEDED", True), ("FAILED", False)])
def test_torchx_waiting_for_its_app_tells_how_it_ended(run_cli, tmp_path, state, healthy):
    """torchx's run (cli/cmd_run.py, `logger.info(f"Job finished: {status.state}")` under its `torchx
    <date> <time> INFO` format; synthetic lines): SUCCEEDED is every replica exiting 0, FAILED no end."""
    report = _scan(run_cli, tmp_path, "Epoch 50, average loss 1.61\n"
                   f"torchx 2023-03-07 02:44:57 INFO     Job finished: {state}\n")
    assert (report["verdict"] == "HEALTHY") is healthy, report["verdict_reason"]


@pytest.mark.parametrize("line", [
    "RuntimeError: transform: failed to synchronize: cudaErrorECCUncorrectable: uncorrectable ECC error encountered",
    "  what():  CUDA error: uncorrectable ECC error encountered",
])
def test_an_uncorrectable_ecc_error_is_the_gpus_fault(run_cli, tmp_path, line):
    """CUDA's error string for cudaErrorECCUncorrectable, as thrust and c10 carry it (synthetic)."""
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["root_cause"]["cause"] == "gpu-fault"
    assert "ECC" in report["root_cause"]["hint"]


@pytest.mark.parametrize("frame", [
    '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 360, in '
    'init_process_group\n    timeout=timeout)\n',
    '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 798, in __init__\n'
    '    _sync_module_states(\n',
])
def test_a_lost_store_while_joining_the_world_says_so(run_cli, tmp_path, frame):
    """A process's own lost connection raised from init_process_group or DDP's constructor (Python's
    traceback format; synthetic lines)."""
    report = _scan(run_cli, tmp_path, "Traceback (most recent call last):\n"
                   '  File "/opt/app/mnist.py", line 132, in main\n    dist.init_process_group(backend="gloo")\n'
                   + frame + "RuntimeError: Connection reset by peer\n")
    assert report["root_cause"]["rule"] == "failure-elsewhere"
    assert "while setting up the process group or DDP" in report["root_cause"]["message"]


def test_a_lost_peer_in_training_is_not_told_as_set_up(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "step 12 loss 0.3\nTraceback (most recent call last):\n"
                   '  File "/opt/app/train.py", line 80, in train\n    loss.backward()\n'
                   "RuntimeError: [/opt/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:7001\n")
    assert report["root_cause"]["rule"] == "failure-elsewhere"
    assert "setting up" not in report["root_cause"]["message"]


@pytest.mark.parametrize("prefix", ["", "[rank2]:"])
def test_terminates_what_right_below_a_processs_exception_is_the_same_failure(run_cli, tmp_path, prefix):
    """Python's exception line, then std::terminate's `terminate called after throwing an instance of
    'c10::Error'` / `  what():  CUDA error: %s` from a destructor as the exception unwound (libstdc++'s
    verbose terminate handler and c10's CUDA check; synthetic lines)."""
    report = _scan(run_cli, tmp_path, "step 3 loss 2.1\n"
                   f"{prefix}RuntimeError: transform: failed to synchronize: cudaErrorECCUncorrectable: uncorrectable "
                   "ECC error encountered\n"
                   f"{prefix}terminate called after throwing an instance of 'c10::Error'\n"
                   f"{prefix}  what():  CUDA error: uncorrectable ECC error encountered\n")
    assert len([f for f in report["findings"] if f["severity"] == "error"]) == 1


def test_terminates_what_of_another_rank_is_its_own_failure(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, "step 3 loss 2.1\n"
                   "[rank2]:RuntimeError: CUDA error: an illegal memory access was encountered\n"
                   "[rank5]:terminate called after throwing an instance of 'c10::Error'\n"
                   "[rank5]:  what():  CUDA error: an illegal memory access was encountered\n")
    ranks = sorted(r for f in report["findings"] if f["severity"] == "error" for r in ([f["rank"]] + f["ranks"]) if r is not None)
    assert 2 in ranks and 5 in ranks


@pytest.mark.parametrize("cause, outer, inner", [
    ("DistBackendError", "ray::_Inner.train() (pid=249, ip=10.0.0.78, repr=TorchTrainer)",
     "ray::_RayTrainWorker__execute.get_next() (pid=192, ip=10.0.0.19)"),
    ("OutOfMemoryError", "ray::main_task() (pid=1748945, ip=10.0.0.5)",
     "ray::WorkerDict.actor_rollout_update_actor() (pid=118848, ip=10.0.0.7)"),
])
def test_ray_re_raising_a_tasks_error_at_each_hop_is_one_failure(run_cli, tmp_path, cause, outer, inner):
    """Ray's RayTaskError(Cause) str: `ray::Task() (pid=N, ip=...)` then the remote traceback; each caller
    raises it again (synthetic lines from that format)."""
    report = _scan(run_cli, tmp_path,
                   f"ray.exceptions.RayTaskError({cause}): {outer}\n"
                   '  File "/opt/ray/train/_internal/utils.py", line 57, in check_for_failure\n'
                   f"ray.exceptions.RayTaskError({cause}): {inner}\n")
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert len(errors) == 1
    assert inner.split(" (")[0] in report["root_cause"]["message"]


def test_ray_errors_of_two_causes_are_two_failures(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path,
                   "ray.exceptions.RayTaskError(DistBackendError): ray::_Inner.train() (pid=249)\n"
                   "ray.exceptions.RayTaskError(FileNotFoundError): ray::Loader.read() (pid=300)\n")
    assert len([f for f in report["findings"] if f["severity"] == "error"]) == 2


@pytest.mark.parametrize("dress", ["WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:",
                                   "W0813 22:23:32.979031 140204091807488 torch/distributed/elastic/rendezvous/"
                                   "dynamic_rendezvous.py:1267] "])
def test_keep_alives_that_lost_the_store_alone_are_no_failure(run_cli, tmp_path, dress):
    """Only a node that joined its round sends keep-alives: their failure alone (the store's host ended,
    crashed or finished) says neither that the node hung in rendezvous nor that the job failed."""
    line = dress + KEEP_ALIVE.format(error="RendezvousConnectionError") + "\n"
    report = _scan(run_cli, tmp_path, line * 3)
    assert report["verdict"] == "INCONCLUSIVE", report["verdict_reason"]


@pytest.mark.parametrize("lines, ranks", [
    (["[rank4]:[E421 02:05:38.764490322 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
      "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
      "[rank6]:[E421 02:05:38.764515994 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
      "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"], [4, 6]),
    (["[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with [/opt/gloo/transport/tcp/pair.cc:152] timed out "
      "connecting: SO_ERROR: Connection refused, remote=[10.0.0.1]:40631"], []),
])
def test_gloos_logged_mesh_failure_is_a_raise_even_without_its_exception(run_cli, tmp_path, lines, ranks):
    """ProcessGroupGloo's constructor logs `Gloo connectFullMesh failed with %s`, then throws it (logAndThrow;
    glog headers of 2.x and 1.x; synthetic lines): each rank's lost peer at set-up."""
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "failure-elsewhere"
    assert report["root_cause"]["ranks"] == ranks


def test_gloos_logged_mesh_failure_gives_way_to_the_exception_it_became(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path,
                   "[E ProcessGroupGloo.cpp:67] Gloo connectFullMesh failed with [/gloo/transport/tcp/pair.h:311] "
                   "Connect timeout [none]\n"
                   "[E ProcessGroupGloo.cpp:67] Gloo connectFullMesh failed with [/gloo/transport/tcp/pair.h:311] "
                   "Connect timeout [none]\n"
                   "RuntimeError: Gloo connectFullMesh failed with [/gloo/transport/tcp/pair.h:311] Connect timeout [none]\n"
                   "RuntimeError: Gloo connectFullMesh failed with [/gloo/transport/tcp/pair.h:311] Connect timeout [none]\n")
    evidence = report["root_cause"]["evidence"]
    assert all(e["text"].startswith("RuntimeError") for e in evidence)


@pytest.mark.parametrize("line, exc", [
    ("**RuntimeError: Connection reset by peer**", ("RuntimeError", "Connection reset by peer")),
    ("`torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error`",
     ("torch.distributed.DistBackendError", "NCCL error in: x.cpp:1, unhandled system error")),
    # emphasis inside the detail is the detail's
    ("RuntimeError: **bold** inside", ("RuntimeError", "**bold** inside")),
])
def test_an_exception_line_a_paste_wrapped_in_markdown_is_read(line, exc):
    assert parse_exception(line) == exc


# A signature on a failure's own exception line, where only the failure's local rank is known
# (mp.spawn's `-- Process N terminated`, torchrun's `failed (exitcode: 1) local_rank: L` on a paste
# that gives no shape): the root names that process. Synthetic lines from spawn.py's and
# elastic/multiprocessing/api.py's format strings and ProcessGroupNCCL's `NCCL error in:`.
NCCL_RAISED = ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:891, "
               "internal error, NCCL version 21.0.3")
DDP_FRAMES = ['Traceback (most recent call last):',
              '  File "/work/ini.py", line 51, in demo_basic',
              '    ddp_model = DDP(model, device_ids=[rank])']


@pytest.mark.parametrize("lines, local_rank", [
    (SPAWN_PARENT + ["torch.multiprocessing.spawn.ProcessRaisedException:", "",
                     "-- Process 3 terminated with the following error:"] + DDP_FRAMES + [NCCL_RAISED], 3),
    (DDP_FRAMES + [NCCL_RAISED, "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) "
                   "local_rank: 1 (pid: 51428) of binary: /usr/bin/python"], 1),
])
def test_a_signature_on_a_failures_exception_line_names_its_local_rank(run_cli, tmp_path, lines, local_rank):
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    root = report["root_cause"]
    assert root["rule"] == "nccl-error" and root["rank"] is None
    assert f"(local_rank {local_rank} on " in root["message"]


# A launcher's own traceback, cut before its exception line, where the launcher reported the failed
# process first (synthetic lines: elastic/multiprocessing/api.py's `failed (exitcode: %s) local_rank:
# %s (pid: %s) of binary: %s`, then ChildFailedError's traceback through torchrun's or accelerate's
# frames; spawn.py's `Terminating process %s via signal SIGTERM`, then ProcessContext.join's frames).
TORCHRUN_FAILED = ("E0429 12:54:54.853000 2807617 torch/distributed/elastic/multiprocessing/api.py:986] failed "
                   "(exitcode: 1) local_rank: 0 (pid: 2807778) of binary: /usr/bin/python3")
ACCELERATE_FRAMES = ['  File "/opt/venv/bin/accelerate", line 7, in <module>',
                     '    sys.exit(main())',
                     '  File "/opt/venv/lib/python3.10/site-packages/accelerate/commands/launch.py", line 1272, '
                     'in launch_command',
                     '    multi_gpu_launcher(args)']


@pytest.mark.parametrize("frames", [[], ACCELERATE_FRAMES], ids=["header-only", "accelerate"])
def test_a_traceback_right_after_torchruns_failed_line_is_its_own_not_the_processs(run_cli, tmp_path, frames):
    report = _scan(run_cli, tmp_path, "\n".join([TORCHRUN_FAILED, "Traceback (most recent call last):", *frames]) + "\n")
    root = report["root_cause"]
    assert report["verdict"] == "FAILED"
    assert "local_rank 0 on " in root["message"] and "failed with exit code 1" in root["message"]
    assert [f["message"] for f in report["findings"] if "cuts off" in f["message"]] == []


def test_mp_spawns_own_traceback_cut_after_it_terminated_the_others_tells_one_of_them_failed(run_cli, tmp_path):
    lines = ["W0821 12:11:08.805000 1505018 site-packages/torch/multiprocessing/spawn.py:169] Terminating process "
             "1505054 via signal SIGTERM", *SPAWN_PARENT[:4]]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert "torch.multiprocessing.spawn saw in one of its processes" in report["root_cause"]["message"]


@pytest.mark.parametrize("raised", ["torch.multiprocessing.spawn.ProcessRaisedException:", "Exception:"])
@pytest.mark.parametrize("cut", [[], [""], ["", "-- P"]], ids=["at-the-exception", "blank", "inside-the-quote-head"])
def test_mp_spawns_report_cut_before_its_quote_is_a_failure(run_cli, tmp_path, raised, cut):
    """spawn.py's join (`raise ProcessRaisedException(msg, ...)` from 1.8, `raise Exception(msg)` before;
    msg begins `\n\n-- Process %d terminated with the following error:`), cut before the quote names
    the process (synthetic)."""
    report = _scan(run_cli, tmp_path, "\n".join(SPAWN_PARENT + [raised] + cut) + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert "torch.multiprocessing.spawn reported from one of its processes" in report["root_cause"]["message"]


def test_a_traceback_after_mp_spawns_quote_is_still_the_processs_own(run_cli, tmp_path):
    lines = SPAWN_PARENT + ["torch.multiprocessing.spawn.ProcessRaisedException:", "",
                            "-- Process 2 terminated with the following error:"] + SPAWN_QUOTED[:3]
    assert "local_rank 2 on " in _scan(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]["message"]


def test_mp_spawns_report_of_a_process_end_cut_before_how_still_names_the_process(run_cli, tmp_path):
    """spawn.py's `process %d terminated with signal %s` cut after `with` (synthetic), below its
    own frames and its Terminating lines."""
    lines = ["W0821 12:11:08.805000 1505018 site-packages/torch/multiprocessing/spawn.py:169] Terminating process "
             "815353 via signal SIGTERM", *SPAWN_PARENT[:4], "    raise ProcessExitedException(",
             "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with"]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert "local_rank 3 on " in report["root_cause"]["message"]


# pdsh (DeepSpeed's multi-node runner) prints each remote line as `host: line` (synthetic lines
# in that format, around Python's own traceback lines); a paste may end on a bare `host:`.
@pytest.mark.parametrize("end", ["", "node2:\n", "\n\n"], ids=["frames", "bare-host", "blank-lines"])
def test_a_traceback_behind_pdsh_host_tags_cut_before_its_exception_is_a_failure(run_cli, tmp_path, end):
    text = ("node2: Traceback (most recent call last):\nnode2:   File \"run_clm.py\", line 659, in <module>\n"
            "node2:     main()\n" + end)
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED" and "cuts off" in report["root_cause"]["message"]


def test_words_ending_in_a_colon_before_indented_text_are_no_failure(run_cli, tmp_path):
    text = "config:\nmodel:     resnet50\noptimizer:     adamw\nstep 1/10 loss 2.3\n"
    assert _scan(run_cli, tmp_path, text)["verdict"] != "FAILED"


def test_torchruns_headings_are_no_pdsh_host_tags():
    from logscan.scan.prefixes import strip_prefixes

    assert strip_prefixes("Failures:").body == "Failures:"
    assert strip_prefixes("Root Cause (first observed failure):").body == "Root Cause (first observed failure):"


# torchrun's `failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s` (elastic/multiprocessing/
# api.py) and DeepSpeed's `{cmd} exits with return code = {code}` (launcher/launch.py, sigkill_handler)
# as pastes and consoles wrap or damage them (synthetic lines from those format strings).
@pytest.mark.parametrize("text, said", [
    # rich's log handler: its source column on the first row, the pid wrapped onto the next
    ("[01:21:55] ERROR    failed (exitcode: -7) local_rank: 0 (pid:      api.py:672\n"
     "                    2255697) of binary:\n"
     "                    /root/miniconda3/envs/sd/bin/python\n"
     "╭──────────────────── Traceback (most recent call last) ────────────────────╮\n", "local_rank 0 on "),
    # hard-wrapped after the exit code
    ("[2026-01-17 06:10:35,778] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6)\n"
     " local_rank: 0 (pid: 223) of binary: /usr/bin/python3\n", "killed by SIGABRT"),
    # damaged: the local rank's value and the rest lost
    ("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 53039 closing\n"
     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rankroot/anaconda3/bin/python\n",
     "killed by SIGKILL"),
    # DeepSpeed's command wrapped over lines, its code on the last
    ("[2023-11-13 16:59:55,650] [ERROR] [launch.py:320:sigkill_handler] ['/opt/conda/bin/python', '-u', "
     "'train.py', '--local_rank=1', '--model', 'open\n'../ckpt/imagebind_huge.pth', '--save_path', './ckpt/'\n"
     "] exits with return code = -9\n", "killed by SIGKILL"),
], ids=["rich-wrapped", "hard-wrapped", "damaged", "deepspeed-wrapped"])
def test_a_launchers_report_of_a_process_end_wrapped_or_damaged_still_tells_it(run_cli, tmp_path, text, said):
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED"
    assert said in report["root_cause"]["message"] and "cut off before the exit code" not in report["root_cause"]["message"]
    assert len([f for f in report["findings"] if f["rule"].startswith("crash-")]) == 1


def test_a_line_that_only_mentions_a_failed_exit_code_is_no_report():
    assert parse_summary_line("the job failed (exitcode: 1) yesterday, see below") is None


# Python's default SIGINT handler raises KeyboardInterrupt (synthetic tracebacks in Python's form):
# a stop from outside, whether a training process or mp.spawn's parent printed it.
@pytest.mark.parametrize("frames", [
    ['  File "train.py", line 40, in <module>', "    loss.backward()"],
    SPAWN_PARENT[1:4] + ['    ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)'],
], ids=["process", "mp-spawn-parent"])
def test_a_traceback_ending_in_keyboardinterrupt_is_a_stop_from_outside(run_cli, tmp_path, frames):
    lines = ["step 1/100 loss 2.0", "Traceback (most recent call last):", *frames, "KeyboardInterrupt"]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert "KeyboardInterrupt" in report["root_cause"]["message"]


@pytest.mark.parametrize("lines", [
    # torch's store barrier at INFO (distributed_c10d.py, _store_based_barrier, 1.8 to 2.0)
    ["[2022-04-21 20:35:42,801][torch.distributed.distributed_c10d][INFO] - Added key: store_based_barrier_key:1 "
     "to store for rank: 1",
     "[2022-04-21 20:35:42,802][torch.distributed.distributed_c10d][INFO] - Rank 1: Completed store-based barrier "
     "for key:store_based_barrier_key:1 with 2 nodes."],
    # torchvision's references (and DeiT's, MAE's) and fairseq's init lines, every rank
    ["| distributed init (rank 0): env://, gpu 0", "| distributed init (rank 1): env://, gpu 1"],
    ["2021-11-02 10:00:00 | INFO | fairseq.distributed.utils | distributed init (rank 2): tcp://localhost:18027"],
    # DeepSpeed's comm backend
    ["[2024-05-01 10:00:00,000] [INFO] [comm.py:637:init_distributed] Initializing TorchBackend in DeepSpeed "
     "with backend nccl"],
])
def test_start_up_lines_of_a_world_joining_say_how_far_it_got(run_cli, tmp_path, lines):
    """Synthetic lines from each format string (named beside each): a paste of start-up alone is
    a distributed job that got as far as init, not one nothing shows."""
    report = paste_report(run_cli, tmp_path, "\n".join(lines + ["Building model..."]) + "\n")
    assert report["verdict"] == "INCONCLUSIVE"
    assert "(init) got past the first batch" in report["verdict_reason"], report["verdict_reason"]


def test_a_paste_with_nothing_of_a_distributed_job_says_no_line_shows_training_began(run_cli, tmp_path):
    report = paste_report(run_cli, tmp_path, "Building model...\nLoaded 1200 images\n")
    assert report["verdict"] == "INCONCLUSIVE"
    assert "no line in 1 file(s) shows that training began" in report["verdict_reason"]


@pytest.mark.parametrize("counted, joined, words", [
    ("worker_count", 4, "4 of world_size=2 ranks checked in; more processes checked in than the world has"),
    ("num_workers_joined", 3, "3 of world_size=2 ranks checked in; more processes checked in"),
])
def test_a_store_barrier_timeout_with_more_checked_in_than_the_world_says_so(run_cli, tmp_path, counted, joined, words):
    """Synthetic line from distributed_c10d.py's _store_based_barrier: `Timed out initializing process
    group in store based barrier on rank: {}, for key: {} (world_size={}, worker_count={}, timeout={})`
    (1.8 to 2.0; `num_workers_joined` from 2.1), raised in a process that had started, under
    torchrun's banner: no rank was missing, the count is what kept it from completing."""
    text = ("WARNING:torch.distributed.run:Setting OMP_NUM_THREADS environment variable for each process to be 1 "
            "in default, to avoid your system being overloaded\n"
            "Distributed init: rank 0/2\n"
            f"RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
            f"store_based_barrier_key:1 (world_size=2, {counted}={joined}, timeout=0:02:00)\n")
    report = paste_report(run_cli, tmp_path, text)
    root = report["root_cause"]
    assert root["rule"] == "hang-before-first-batch", report["findings"]
    assert "store barrier timed out on rank 0 with " + words in root["message"]
    assert "torchrun never started its processes" not in str(report["findings"])


@pytest.mark.parametrize("line, told", [
    # tune.py: logger.error("Trials did not complete: %s", incomplete_trials)
    ("2022-11-15 19:26:36,618\tERROR tune.py:773 -- Trials did not complete: [TorchTrainer_96bfe_00000]",
     "Trials did not complete: [TorchTrainer_96bfe_00000]"),
    # the console output (2.5 on): a trial's, and a Trainer's single trial's
    ("Trial TorchTrainer_ccdf1_00002 errored after 3 iterations at 2024-10-10 16:42:48. Total running time: 2min 1s",
     "Trial TorchTrainer_ccdf1_00002 errored after 3 iterations"),
    ("Training errored after 0 iterations at 2024-06-10 14:40:30. Total running time: 30min 7s",
     "Training errored after 0 iterations"),
    # tune_controller.py's DEBUG line as the trial fails
    ("2024-10-10 16:42:48,845\tDEBUG tune_controller.py:735 -- Setting status for trial TorchTrainer_ccdf1_00000 "
     "from RUNNING to ERROR", "trial TorchTrainer_ccdf1_00000 failed"),
])
def test_ray_tunes_word_that_a_trial_failed_is_a_failure(run_cli, tmp_path, line, told):
    """Synthetic lines from Ray Tune's and Train's format strings (named beside each): the trial's own
    error is in its error.txt; the line says it failed."""
    report = paste_report(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert told in report["root_cause"]["message"]


@pytest.mark.parametrize("line", [
    "Trial TorchTrainer_8dace_00004 completed training after 20 iterations at 2023-06-23 15:30:42. Total running time: 14s",
    "Training completed after 10 iterations at 2024-03-01 10:00:00. Total running time: 1min 3s",
])
def test_ray_trains_word_that_training_completed_is_a_finished_run(run_cli, tmp_path, line):
    report = paste_report(run_cli, tmp_path, line + "\n")
    assert report["verdict"] == "HEALTHY", report["verdict_reason"]


def test_an_interrupted_processs_own_traceback_is_no_wait_in_rendezvous(run_cli, tmp_path):
    """A training process's traceback ending in KeyboardInterrupt (Ctrl-C), then torchrun's word that
    the signal reached it (agent/server/api.py: `Received %s death signal, shutting down workers`),
    synthetic: the processes had started, so torchrun was not waiting in rendezvous."""
    text = ('Traceback (most recent call last):\n  File "train.py", line 6, in <module>\n    trainer.train()\n'
            '  File "/opt/venv/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", line 1034, in forward\n'
            "    self._sync_buffers()\nKeyboardInterrupt\n"
            "WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n")
    report = paste_report(run_cli, tmp_path, text)
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert "hang-in-rendezvous" not in {f["rule"] for f in report["findings"]}


def test_an_interrupted_process_still_in_init_process_group_was_waiting_to_meet(run_cli, tmp_path):
    """The same interrupt with the process's frames inside init_process_group's rendezvous
    (distributed_c10d.py, `next(rendezvous_iterator)`), synthetic: it was still waiting there."""
    text = ('Traceback (most recent call last):\n  File "train.py", line 20, in run\n'
            "    dist.init_process_group(backend, rank=rank, world_size=world_size)\n"
            '  File "/opt/venv/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 434, in '
            "init_process_group\n    store, rank, world_size = next(rendezvous_iterator)\nKeyboardInterrupt\n"
            "WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n")
    report = paste_report(run_cli, tmp_path, text)
    assert report["root_cause"]["rule"] == "stopped-from-outside"
    assert "hang-in-rendezvous" in {f["rule"] for f in report["findings"]}


@pytest.mark.parametrize("header", [True, False], ids=["with-its-header", "frames-only"])
def test_mp_spawns_own_traceback_cut_before_its_exception_is_a_process_failure_not_torchruns(run_cli, tmp_path,
                                                                                              header):
    """mp.spawn's parent frames (spawn.py's spawn, start_processes, join), synthetic, the log ending
    inside them: spawn raises from join only after one of its processes failed, and no torchrun ran."""
    frames = SPAWN_PARENT[1:] if not header else SPAWN_PARENT
    report = _scan(run_cli, tmp_path, "step 10 loss 2.1\n" + "\n".join(frames) + "\n")
    root = report["root_cause"]
    assert report["verdict"] == "FAILED"
    assert "torch.multiprocessing.spawn saw in one of its processes" in root["message"], root["message"]
    assert "torchrun" not in root["message"] and "torchrun itself failed" not in root["hint"]


def test_an_exception_line_cut_short_is_the_whole_copy_another_rank_printed(run_cli, tmp_path):
    """Two ranks' tracebacks with gloo's `Connection closed by peer` (pair.cc's message), the second
    cut by the paste's end (synthetic): both lost a peer; neither is a crash of its own."""
    frames = ('Traceback (most recent call last):\n  File "train.py", line 50, in <module>\n'
              "    model = DDP(model)\n")
    text = (frames + "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
            "[10.0.0.2]:47490\n" + frames + "RuntimeError: [../third_party/gloo/gloo/transport/tcp/p\n")
    report = paste_report(run_cli, tmp_path, text)
    assert report["root_cause"]["rule"] == "failure-elsewhere", report["findings"]
    assert "tcp/p " not in report["root_cause"]["message"] + " "


def test_mp_spawns_parent_failing_in_its_own_set_up_is_no_process_failure_it_saw(run_cli, tmp_path):
    """mp.spawn's start_processes failing before any process ran (its frames, then multiprocessing's
    own, cut: synthetic), e.g. a full /dev/shm for its SimpleQueue's lock: nothing says a process failed."""
    lines = ["Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
             "    mp.spawn(run, nprocs=4)",
             '  File "/opt/venv/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 179, in start_processes',
             "    error_queue = mp.SimpleQueue()",
             '  File "/usr/lib/python3.8/multiprocessing/context.py", line 113, in SimpleQueue',
             "    return SimpleQueue(ctx=self.get_context())"]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert "spawn saw in one of its processes" not in report["root_cause"]["message"]
    assert "torchrun" not in report["root_cause"]["message"]


@pytest.mark.parametrize("tail", [
    # detectron2's TrainerBase.train: logger.exception("Exception during training:"), the traceback cut
    ["ERROR [12/20 18:16:20 d2.engine.train_loop]: Exception during training:", "Traceback (most recent"],
    # Hydra's run_job: `Error executing job with overrides: [...]`, nothing after it
    ["Error executing job with overrides: ['trainer.devices=2']"],
])
def test_a_framework_s_word_that_it_caught_an_exception_is_a_failure(run_cli, tmp_path, tail):
    """Synthetic lines from each framework's format string, after training steps."""
    text = "[12/20 18:16:00 d2.utils.events]:  eta: 1:02:03  iter: 4979  total_loss: 1.2\n" + "\n".join(tail) + "\n"
    report = paste_report(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert report["root_cause"]["rule"] == "crash-during-training"


@pytest.mark.parametrize("text", [
    "RuntimeError: Broken pipe\n",
    'Traceback (most recent call last):\n  File "train.py", line 30, in <module>\n    dist.barrier()\n'
    "RuntimeError: Broken pipe\n",
])
def test_a_bare_broken_pipe_from_a_collective_is_a_lost_peer(run_cli, tmp_path, text):
    """c10d's socket calls raise strerror's text as RuntimeError (SYSCHECK's std::system_error),
    synthetic: the peer closed its end first."""
    report = paste_report(run_cli, tmp_path, text)
    assert report["root_cause"]["rule"] == "failure-elsewhere", report["findings"]


def test_a_headerless_traceback_with_the_authors_elision_is_still_cut_there(run_cli, tmp_path):
    """Frames of a Lightning run with `...` standing for the frames a paste left out (synthetic):
    the log ends inside a traceback, which is a failure."""
    text = ("step 10 loss 2.1\n"
            '  File "/work/train.py", line 541, in main\n    Trainer(config).train()\n...\n'
            '  File "/opt/venv/lib/python3.12/site-packages/pytorch_lightning/trainer/call.py", line 222, in '
            "_call_callback_hooks\n    fn(trainer, trainer.lightning_modu\n")
    report = paste_report(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED", report["verdict_reason"]



def test_a_lost_peer_mp_spawn_quotes_names_its_process(run_cli, tmp_path):
    """mp.spawn's quote of process 1's traceback ending in a lost peer (c10d's `Broken pipe`),
    synthetic: the process that lost it is named, as its own crash would be."""
    lines = SPAWN_PARENT + ["torch.multiprocessing.spawn.ProcessRaisedException:", "",
                            "-- Process 1 terminated with the following error:", "Traceback (most recent call last):",
                            '  File "/work/main.py", line 30, in main_worker', "    dist.barrier()",
                            "RuntimeError: Broken pipe"]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["root_cause"]["rule"] == "failure-elsewhere"
    assert report["root_cause"]["message"].startswith("local_rank 1 on ")


@pytest.mark.parametrize("exit_type, fails", [("SYSTEM_ERROR", True), ("SYSTEM_ERROR_EXIT", True),
                                              ("UNEXPECTED_SYSTEM_EXIT", True), ("INTENDED_USER_EXIT", False)])
def test_rays_cause_of_an_actors_death_is_a_failure_unless_asked_for(run_cli, tmp_path, exit_type, fails):
    """Ray's death cause (actor_died_error_context: `The actor is dead because its worker process has
    died. Worker exit type: {type} Worker exit detail: {detail}`), synthetic, behind a Ray prefix."""
    line = (f"(BackendExecutor pid=7850) The actor is dead because its worker process has died. Worker exit type: "
            f"{exit_type} Worker exit detail: Worker unexpectedly exits with a connection error code 2.")
    report = paste_report(run_cli, tmp_path, line + "\n")
    assert (report["verdict"] == "FAILED") is fails, report["verdict_reason"]


def test_an_actor_died_error_and_its_cause_below_it_are_one_failure(run_cli, tmp_path):
    """ActorDiedError's message puts the death's cause on a line of its own (synthetic)."""
    text = ('Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n    ray.get(runner.run.remote())\n'
            "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
            "\tclass_name: TaskRunner\n\tpid: 1075016\n"
            "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
            "Worker exits unexpectedly.\n")
    report = paste_report(run_cli, tmp_path, text)
    assert [f["rule"] for f in report["findings"] if f["severity"] == "error"] == [report["root_cause"]["rule"]]


@pytest.mark.parametrize("command", [
    "$ python -m torch.distributed.launch --nproc_per_node 2 a.py",
    "+ torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 train.py",
])
def test_a_pasted_launch_command_shows_a_distributed_job(run_cli, tmp_path, command):
    """A launch command as a paste shows it (a prompt's, bash xtrace's; synthetic), then start-up
    lines of the script: the job was started, and no line says how far it got."""
    report = paste_report(run_cli, tmp_path, command + "\nbuilding model\nloading data\n")
    assert report["verdict"] == "INCONCLUSIVE"
    assert "got past the first batch" in report["verdict_reason"], report["verdict_reason"]


EVENT = ('{{"name": "torchelastic.worker.status.{state}", "source": "WORKER", "timestamp": 0, "metadata": '
         '{{"run_id": "none", "global_rank": {rank}, "group_rank": 1, "worker_id": "{pid}", "role": "default", '
         '"hostname": "k8s-node1", "state": "{state}", "total_run_time": 100192, "rdzv_backend": "static", '
         '"raw_error": null, "metadata": "{{\\"group_world_size\\": 2, \\"entry_point\\": \\"python\\"}}", '
         '"agent_restarts": 3}}}}')


@pytest.mark.parametrize("events, rank", [
    ([("FAILED", 5, 16500), ("FAILED", 4, 16499)], 5),
    ([("SUCCEEDED", 4, 16499), ("FAILED", 5, 16500)], 5),
    # two events give one pid two ranks: neither is taken
    ([("FAILED", 5, 16500), ("FAILED", 6, 16500)], None),
])
def test_torchelastics_worker_status_event_names_the_global_rank_of_a_pid(run_cli, tmp_path, events, rank):
    """torch 1.9's elastic events, as its console handler prints them (events/api.py, Event.serialize);
    synthetic lines in that form."""
    lines = ["[ERROR] 2022-08-21 21:41:48,161 api: failed (exitcode: 1) local_rank: 1 (pid: 16500) of binary: "
             "/usr/bin/python"] + [EVENT.format(state=s, rank=r, pid=p) for s, r, p in events]
    report = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED" and report["root_cause"]["rank"] == rank
