"""NCCL's watchdog and what follows from it, read by family across torch and NCCL releases.

Every line here is synthetic, built from the format strings in the sources at the releases named
and filled with plausible values; none is copied from a run:

- torch's NCCLComm::getNcclComm (torch/lib/c10d/NCCLUtils.hpp up to 1.8, then
  torch/csrc/distributed/c10d/NCCLUtils.cpp): `NCCL communicator was aborted.` (<= 1.6),
  `"NCCL communicator was aborted on rank ", rank_, ". "` (1.7 on), with `" Original reason for
  failure was: " << reason` appended when the watchdog recorded one (1.10 on).
- ProcessGroupNCCL.cpp's watchdog: `[Rank N] Watchdog caught collective operation timeout: WorkNCCL(
  OpType=X, Timeout(ms)=N) ran for N milliseconds before timing out.` (1.9, 1.10, no SeqNum), and
  `terminate called after throwing an instance of 'std::runtime_error'` / `  what():  <that>` from
  std::terminate.
- NCCL's own debug lines (`host:pid:tid [dev] file:line NCCL WARN ...`): src/misc/ibvwrap.cc's
  `Failed to open libibverbs.so[.1]` (WARN up to 2.1x, INFO later) and src/init.cc's
  `Invalid rank requested : %d/%d`.
"""

from __future__ import annotations

import pytest

from conftest import paste_report

_scan = paste_report


# --- 1. the aborted communicator is the watchdog's consequence ---------------------------------

BACKWARD = ('  File "/opt/conda/lib/python3.8/site-packages/torch/autograd/__init__.py", line 149, in backward\n'
            "    allow_unreachable=True, accumulate_grad=True)  # allow_unreachable flag\n")
TAKEDOWN_1_9 = ("[E ProcessGroupNCCL.cpp:325] Some NCCL operations have failed or timed out. Due to the "
                "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
                "corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.\n")


def _watchdog_1_9(rank: int, op: str = "BROADCAST") -> str:
    return (TAKEDOWN_1_9 + "terminate called after throwing an instance of 'std::runtime_error'\n"
            f"  what():  [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(OpType={op}, "
            f"Timeout(ms)=1800000) ran for 180{rank}256 milliseconds before timing out.\n")


@pytest.mark.parametrize("aborted", [
    "RuntimeError: NCCL communicator was aborted on rank 3.",          # 1.7 to 1.9
    "RuntimeError: NCCL communicator was aborted.",                    # <= 1.6
    # 1.10 on, the reason a timeout gave (the watchdog's own sentence)
    "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: [Rank 3] "
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=10, OpType=BROADCAST, "
    "Timeout(ms)=1800000) ran for 1801177 milliseconds before timing out.",
])
def test_the_aborted_communicator_follows_the_watchdog_timeout(run_cli, tmp_path, aborted):
    report = _scan(run_cli, tmp_path, BACKWARD + aborted + "\n" + _watchdog_1_9(5) + _watchdog_1_9(3))
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    root = report["root_cause"]
    assert root["rule"] == "collective-timeout", root["message"]
    assert set(root["ranks"]) >= {3, 5}
    assert not any(f["rule"].startswith("crash-") and f["role"] == "root-cause" for f in report["findings"])


def test_the_aborted_communicator_alone_still_fails_the_job(run_cli, tmp_path):
    """No watchdog line in view: the exception still says the process failed, and that its cause
    is elsewhere."""
    report = _scan(run_cli, tmp_path, "Traceback (most recent call last):\n" + BACKWARD
                   + "RuntimeError: NCCL communicator was aborted on rank 3.\n")
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == "failure-elsewhere"


def test_a_crash_beside_an_aborted_communicator_leads(run_cli, tmp_path):
    """Must not: a rank's own error (a CUDA OOM) stays the root; the other rank's aborted
    communicator follows from it."""
    report = _scan(run_cli, tmp_path,
                   "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                   "total capacity of 79.10 GiB of which 1.06 GiB is free.\n"
                   "[rank1]: RuntimeError: NCCL communicator was aborted on rank 1.\n")
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == "cuda-out-of-memory", report["root_cause"]["message"]


# --- 2. NCCL's IB probe is no error; its refusal of a rank is the world size's -----------------

IB_PROBE = "job-worker-0:70:70 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
SOCKETS = "job-worker-0:70:70 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0>\n"


@pytest.mark.parametrize("requested", ["1/1", "3/2"])
def test_an_invalid_rank_leads_past_the_ib_probe(run_cli, tmp_path, requested):
    rank, size = requested.split("/")
    report = _scan(run_cli, tmp_path, IB_PROBE + SOCKETS
                   + f"job-worker-0:70:70 [0] init.cc:981 NCCL WARN Invalid rank requested : {requested}\n")
    assert report["verdict"] == "FAILED"
    root = report["root_cause"]
    assert root["rule"] == "nccl-rank-out-of-range" and root["rank"] == int(rank)
    assert f"rank {rank} in a world of {size}" in root["message"]
    assert not any("libibverbs" in e["text"] for f in report["findings"] for e in f["evidence"])


def test_the_ib_probe_alone_is_no_failure(run_cli, tmp_path):
    """Must not: the probe and the socket transport NCCL falls back to are a working start-up."""
    report = _scan(run_cli, tmp_path, IB_PROBE + SOCKETS)
    assert report["verdict"] != "FAILED" and report["findings"] == []
    assert [h["rule"] for h in report["harmless"]] == ["nccl-ibverbs-probe"]


def test_a_real_nccl_warn_after_the_ib_probe_is_the_nccl_error(run_cli, tmp_path):
    """Must not: another NCCL WARN is still nccl-error's, with its own detail."""
    report = _scan(run_cli, tmp_path, IB_PROBE + SOCKETS
                   + "job-worker-0:70:90 [0] NCCL WARN Net : Connection closed by remote peer 10.0.0.6<45678>\n"
                   + "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
                     "unhandled system error, NCCL version 2.14.3\n")
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == "nccl-error"
    assert "libibverbs" not in report["root_cause"]["message"]


# --- 3. the watchdog's takedown told alone, its reason cut off --------------------------------

TAKEDOWN_2_5 = (
    "[rank6]:[E624 04:14:29.224103812 ProcessGroupNCCL.cpp:684] [Rank 6] Some NCCL operations have failed or "
    "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
    "corrupted/incomplete data.\n"
    "[rank6]:[E624 04:14:29.224139849 ProcessGroupNCCL.cpp:698] [Rank 6] To avoid data inconsistency, we are "
    "taking the entire process down.\n")
STEPS = "Steps:   0%|          | 1/500000 [12:44<14459:40:43, 104.11s/it, loss=0.36]\n"


@pytest.mark.parametrize("takedown", [
    # 2.5: the two sentences, then the watchdog's end with its reason cut mid-word
    TAKEDOWN_2_5 + "[rank6]:[E624 04:14:29.225547137 ProcessGroupNCCL.cpp:1896] [PG ID 1 PG GUID 1 Rank 6] "
                   "Process group watchdog thread terminated with exception: [Rank 6] Watchdog caught co\n",
    TAKEDOWN_2_5,
    # 1.9 to 1.11: one line (no rank in it: the prefix-less paste names none)
    "[E ProcessGroupNCCL.cpp:325] Some NCCL operations have failed or timed out. Due to the asynchronous "
    "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this "
    "inconsistency, we are taking the entire process down.\n",
    # 2.2, 2.3: the watchdog's end after logPrefix(), its reason cut
    "[rank6]:[E ProcessGroupNCCL.cpp:1182] [PG 0 Rank 6] NCCL watchdog thread terminated with exception: [Rank 6] Wat\n",
])
def test_the_watchdog_taking_the_process_down_is_a_failure(run_cli, tmp_path, takedown):
    report = _scan(run_cli, tmp_path, STEPS + takedown)
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    root = report["root_cause"]
    assert root["rule"] == "nccl-watchdog-abort"
    if takedown.startswith("[rank6]"):
        assert root["rank"] == 6


def test_the_watchdog_s_reason_in_view_leads(run_cli, tmp_path):
    """Must not: with the timeout's own sentence in view, the timeout leads and the takedown follows."""
    report = _scan(run_cli, tmp_path, STEPS
                   + "[rank6]:[E624 04:14:29.220000000 ProcessGroupNCCL.cpp:632] [Rank 6] Watchdog caught collective "
                     "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                     "Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n" + TAKEDOWN_2_5)
    assert report["root_cause"]["rule"] == "collective-timeout"
    abort = [f for f in report["findings"] if f["rule"] == "nccl-watchdog-abort"]
    assert abort and all(f["role"] != "root-cause" for f in abort)


def test_the_watchdog_starting_is_no_failure(run_cli, tmp_path):
    """Must not: the watchdog's start-up line and a healthy step are not a takedown."""
    report = _scan(run_cli, tmp_path, "[I ProcessGroupNCCL.cpp:1040] [Rank 0] NCCL watchdog thread started!\n" + STEPS)
    assert report["verdict"] != "FAILED"
    assert not any(f["rule"] == "nccl-watchdog-abort" for f in report["findings"])


# --- 4. torch 2.4+'s `NCCL error: <detail>`, the rank its [Rank N] names ---------------------------

@pytest.mark.parametrize("line, rank", [
    # ProcessGroupNCCL.cpp checkForNCCLErrorsInternal: `"NCCL error: " + ncclGetErrorWithVersion(err)`,
    # reported under logPrefix() by the watchdog (2.4 on)
    ("[rank4]:[E1229 16:47:25.333820755 ProcessGroupNCCL.cpp:541] [Rank 4] found async exception when checking "
     "for NCCL errors: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5", 4),
    ("  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: "
     "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.22.3", 1),
])
def test_nccl_errors_colon_wording_names_its_rank(run_cli, tmp_path, line, rank):
    # NCCL's own WARN line first, unprefixed: the same report, not a second error
    warn = ("gpu-node-3:34610:36821 [4] NCCL WARN NET/IB : Got completion from peer 10.0.1.23<36598> with "
            "status=12 opcode=0 len=0 vendor err 129 (Recv)\n")
    report = _scan(run_cli, tmp_path, warn + line + "\n")
    assert report["root_cause"]["rule"] == "nccl-error"
    assert report["root_cause"]["rank"] == rank
    assert len([f for f in report["findings"] if f["rule"] == "nccl-error"]) == 1


# --- 5. NCCL's WARN lines a process went on from ----------------------------------------------

REM_ALLOCATOR = ("node-a:39:298 [0] bootstrap.cc:279 NCCL WARN [Rem Allocator] Allocation failed (segment 0, fd 130)\n"
                 "node-a:39:298 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n")
SOCKET_CLOSED = "node-a:39:298 [0] include/socket.h:423 NCCL WARN Net : Connection closed by remote peer 10.0.0.4<52638>\n"
STEPS = "".join(f"Train Epoch: 1 [{i * 900}/246000 ({i}%)]\tLoss: 0.0{i}6680\n" for i in range(1, 4))


@pytest.mark.parametrize("warns", [REM_ALLOCATOR, SOCKET_CLOSED])
def test_nccl_warnings_training_went_on_from_fail_nothing(run_cli, tmp_path, warns):
    """NCCL's helper threads (bootstrap.cc's remote allocator, a socket's reader) log WARN and the run
    goes on: the steps after them show the process did (NCCL's `%s:%d:%d [%d] %s:%d NCCL WARN %s`
    debug format; synthetic lines)."""
    report = _scan(run_cli, tmp_path, warns + STEPS)
    assert report["verdict"] != "FAILED", report["verdict_reason"]


def test_nccl_warnings_before_an_exception_are_still_its_error(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, STEPS + SOCKET_CLOSED
                   + "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, "
                     "remote process exited or there was a network error, NCCL version 2.14.3\n" + STEPS)
    assert report["verdict"] == "FAILED"


@pytest.mark.parametrize("line, rank", [
    ("[E ProcessGroupNCCL.cpp:915] [Rank 1] NCCL watchdog thread terminated with exception: CUDA error: "
     "device-side assert triggered", 1),
    ("[rank3]:[E1201 10:00:00.000000000 ProcessGroupNCCL.cpp:1618] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
     "Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was "
     "encountered", 3),
    ("[E1201 10:00:00.000000000 ProcessGroupNCCL.cpp:1618] [PG 0 Rank 2] Process group watchdog thread "
     "terminated with exception: CUDA error: unspecified launch failure", 2),
])
def test_a_cuda_error_the_watchdog_ended_on_names_the_rank_its_line_does(run_cli, tmp_path, line, rank):
    """logPrefix()'s `[Rank N] ` (up to 2.1), the default group's `[PG 0 Rank N] ` (2.2, 2.3) and
    `[PG ID 0 PG GUID 0(default_pg) Rank N] ` (2.4 on) before the watchdog's last words (synthetic)."""
    report = _scan(run_cli, tmp_path, line + "\n")
    assert report["root_cause"]["rank"] == rank


# --- the default group's rank beside a `[rankN]:` prefix that is a local rank ----------------
# torchrun's `--role rank --tee 3` prefixes each line with the role and the LOCAL rank (`[rank0]:`);
# ProcessGroupNCCL's logPrefix() names the default group's (global) rank: `[PG 0 Rank N]` (2.2, 2.3),
# `[PG ID 0 PG GUID 0(default_pg) Rank N]` (2.4 on).

@pytest.mark.parametrize("log_prefix", ["[PG ID 0 PG GUID 0(default_pg) Rank 4]", "[PG 0 Rank 4]"])
def test_the_default_groups_rank_outranks_a_local_rank_prefix(run_cli, tmp_path, log_prefix):
    lines = [
        f"[rank0]:  what():  {log_prefix} Process group watchdog thread terminated with exception: [Rank 4] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=49120, OpType=_ALLGATHER_BASE, "
        "NumelIn=16416832, NumelOut=1050677248, Timeout(ms)=300000) ran for 300015 milliseconds before timing out.",
        "[rank0]:Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 "
        "(most recent call first):",
        "[rank0]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1500a49091b6 in libc10.so)",
        "[rank0]:frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        "std::ratio<1l, 1000l> > >) + 0x2b4 (0x1500a5c52c74 in libtorch_cuda.so)",
    ]
    root = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]
    assert root["rule"] == "collective-timeout" and "(rank 4 waited)" in root["message"]


# --- 2.4+'s dump signal: the timeout told to every rank through the store --------------------
# ProcessGroupNCCL.cpp getNCCLWatchdogTimeoutErrorMsg (HeartbeatMonitor's getWatchdogTimeoutErrorMsg later):
# logPrefix() + `Received a dump signal due to a collective timeout from ` + `this local rank` | ` rank N` + ...

DUMP = ("[rank{rank}]:[E804 23:05:54.817424543 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] "
        "Received a dump signal due to a collective timeout from {source} and we will try our best to dump the debug "
        "info. Last enqueued NCCL work: 1261, last completed NCCL work: 1259.")


@pytest.mark.parametrize("source, words", [(" rank 13", "(rank 0 waited); rank 13's watchdog caught it"),
                                           ("this local rank", "(rank 0 waited)")])
def test_the_dump_signal_of_a_collective_timeout_is_the_timeout(run_cli, tmp_path, source, words):
    text = ("[rank0]:[E804 23:05:54.816499929 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
            "Observed flight recorder dump signal from another rank via TCPStore.\n" + DUMP.format(rank=0, source=source) + "\n")
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == "collective-timeout" and words in report["root_cause"]["message"]


def test_a_watchdog_line_that_lost_its_brackets_keeps_its_rank(run_cli, tmp_path):
    """A paste that dropped the glog header's and logPrefix()'s brackets (`[E ...] [Rank 1]`)."""
    line = ("E ProcessGroupNCCL.cpp:828 Rank 1 Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
            "OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1802965 milliseconds before timing out.")
    root = _scan(run_cli, tmp_path, line + "\n")["root_cause"]
    assert root["rule"] == "collective-timeout" and "(rank 1 waited)" in root["message"]


def test_an_nccl_error_without_a_prefix_takes_the_rank_of_the_process_that_raised_it(run_cli, tmp_path):
    """An unprefixed traceback ending in NCCL's error, and torchrun's report of the one process that
    failed (its failed line and its Root Cause entry, errors/__init__.py's rows): that process's rank."""
    lines = ["Traceback (most recent call last):", '  File "train.py", line 12, in <module>', "    model = DDP(model)",
             "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:891, internal error, "
             "NCCL version 21.0.3",
             "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 51428) of "
             "binary: /usr/bin/python3",
             "Root Cause (first observed failure):", "[0]:", "  time      : 2022-06-23_10:00:00",
             "  host      : node-a", "  rank      : 3 (local_rank: 1)", "  exitcode  : 1 (pid: 51428)"]
    root = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]
    assert root["rule"] == "nccl-error" and root["rank"] == 3


@pytest.mark.parametrize("original", [
    "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 600000ms for send operation to complete",
    "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
])
def test_a_monitored_barrier_that_heard_errors_from_rank_0_names_rank_0(run_cli, tmp_path, original):
    """ProcessGroupGloo.cpp monitoredBarrier on a rank other than 0: `Rank N successfully reached
    monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs
    for faulty rank.` with gloo's timeout as its original exception (synthetic lines): rank 0 is the one
    waited for."""
    lines = ["[rank3]: RuntimeError: Rank 3 successfully reached monitoredBarrier, but received errors while waiting "
             "for send/recv from rank 0. Please check rank 0 logs for faulty rank.", "[rank3]:  Original exception: ",
             f"[rank3]: {original}"]
    root = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]
    assert root["rule"] == "collective-timeout" and root["rank"] == 0


def test_a_monitored_barrier_that_lost_rank_0_says_where_to_look(run_cli, tmp_path):
    """The same message with a lost connection as its original exception (gloo's pair.cc wording; synthetic
    lines): no timeout, a lost peer, and rank 0 named as the one waited for."""
    lines = ["RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for "
             "send/recv from rank 0. Please check rank 0 logs for faulty rank.", " Original exception: ",
             "[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.1]:25077"]
    root = _scan(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]
    assert root["rule"] == "failure-elsewhere" and "(rank 0, which it waited for, is where to look)" in root["message"]


# NCCL's debug header (debug.cc: `%s:%d:%d [%d] `) and its init line (init.cc: `comm %p rank %d nranks %d
# cudaDev %d busId %lx - Init START`); the lines below are SYNTHETIC, built from those formats.
COMM = "node-b:{pid}:{tid} [{dev}] NCCL INFO comm 0x7f0dc0269bf0 rank {rank} nranks {nranks} cudaDev {dev} busId 1000 - Init START"
REFUSED = "node-b:{pid}:{tid} [{dev}] include/socket.h:361 NCCL WARN Call to connect timeout : Connection refused"


@pytest.mark.parametrize("comms, rank", [
    # the process's communicator of the world names its rank
    ([(4152, 2, 4)], 2),
    # a smaller communicator (a tensor-parallel group) beside the world's: the world's rank
    ([(4152, 0, 2), (4152, 2, 4)], 2),
    # another process's communicator says nothing of this one
    ([(4153, 3, 4)], None),
])
def test_an_nccl_warning_takes_the_rank_its_process_formed_its_world_communicator_with(run_cli, tmp_path, comms, rank):
    lines = [COMM.format(pid=pid, tid=4206, dev=0, rank=r, nranks=n) for pid, r, n in comms]
    report = paste_report(run_cli, tmp_path, "\n".join(lines + [REFUSED.format(pid=4152, tid=4206, dev=0)]) + "\n")
    assert report["root_cause"]["rule"] == "nccl-error" and report["root_cause"]["rank"] == rank


def test_only_a_smaller_communicator_than_the_world_names_no_rank(run_cli, tmp_path):
    """The world is 8 (the env print's WORLD_SIZE), the communicator shown 2: a group's rank, no global one."""
    lines = ["torchrun env: RANK= 6 LOCAL_RANK= 2 WORLD_SIZE= 8", COMM.format(pid=4152, tid=4206, dev=0, rank=1, nranks=2),
             REFUSED.format(pid=4152, tid=4206, dev=0)]
    report = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["root_cause"]["rule"] == "nccl-error" and report["root_cause"]["rank"] != 1


@pytest.mark.parametrize("last_error", [
    "Bootstrap : no socket interface found",
    "ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)",
])
def test_nccls_last_error_of_no_interface_is_the_cause(run_cli, tmp_path, last_error):
    """torch 2.x's DistBackendError puts `Last error:` and NCCL's message on lines of their own
    (ProcessGroupNCCL.cpp's getNcclErrorDetailStr); synthetic lines from that form."""
    text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1207, "
            "internal error, NCCL version 2.14.3\nncclInternalError: Internal check failed.\nLast error:\n" + last_error + "\n")
    cause = paste_report(run_cli, tmp_path, text)["root_cause"]
    assert cause["rule"] == "nccl-error" and cause["cause"] == "nccl-no-interface"
    assert "NCCL_SOCKET_IFNAME" in cause["hint"]


WATCHDOG = ("[E ProcessGroupNCCL.cpp:737] [Rank {rank}] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum={seq}, OpType={op}{extra}, Timeout(ms)=1800000) ran for 1801750 milliseconds before timing out.")


@pytest.mark.parametrize("works, odd", [
    # FSDP's all-gathers on two ranks, a REDUCE on rank 0 (1.x's wording)
    ([(1, "_ALLGATHER_BASE"), (0, "REDUCE"), (5, "_ALLGATHER_BASE")], 0),
    # 2.x's wording (NumelIn, NumelOut): a BROADCAST on rank 2 among all-reduces
    ([(0, "ALLREDUCE"), (1, "ALLREDUCE"), (2, "BROADCAST"), (3, "ALLREDUCE")], 2),
])
def test_ranks_timed_out_in_different_collectives_at_one_seqnum_name_the_odd_one(run_cli, tmp_path, works, odd):
    """ProcessGroupNCCL's watchdog message (synthetic lines from its format in 1.x and 2.x)."""
    extra = ", NumelIn=1, NumelOut=1" if len(works) == 4 else ""
    text = "step 10 loss 2.3\n" + "".join(WATCHDOG.format(rank=r, seq=3742816, op=op, extra=extra) + "\n" for r, op in works)
    cause = paste_report(run_cli, tmp_path, text)["root_cause"]
    assert cause["rule"] == "collective-timeout" and cause["rank"] == odd
    assert f"rank {odd} was in " in cause["message"] and "TORCH_DISTRIBUTED_DEBUG=DETAIL" in cause["hint"]


@pytest.mark.parametrize("works", [
    # one kind of collective: the same work everywhere, no odd one
    [(0, 7, "ALLREDUCE"), (1, 7, "ALLREDUCE")],
    # two ranks, two kinds: neither is the odd one
    [(0, 7, "ALLREDUCE"), (1, 7, "BROADCAST")],
    # different numbers: counts of different groups, or a rank behind
    [(0, 7, "ALLREDUCE"), (1, 9, "BROADCAST"), (2, 9, "BROADCAST")],
])
def test_no_odd_collective_is_named_where_the_lines_do_not_single_one_out(run_cli, tmp_path, works):
    text = "step 10 loss 2.3\n" + "".join(WATCHDOG.format(rank=r, seq=s, op=op, extra="") + "\n" for r, s, op in works)
    cause = paste_report(run_cli, tmp_path, text)["root_cause"]
    assert cause["rule"] == "collective-timeout" and " was in " not in cause["message"]


@pytest.mark.parametrize("last_error", [
    "socketPollConnect poll() returned 1, no POLLOUT events",
    "NET/IB : Got completion from peer 10.0.0.2<58624> with error 12, opcode 0, len 0, vendor err 129",
])
def test_nccls_last_error_on_the_line_after_its_head_is_named(run_cli, tmp_path, last_error):
    """torch 2.x's DistBackendError ends `Last error:` and NCCL's message on the next line, which holds
    no word a rule's keyword finds (synthetic lines in that form)."""
    text = ("[rank9]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1970, unhandled system error, NCCL version 2.20.5\n"
            "[rank9]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
            "[rank9]: Last error:\n[rank9]: " + last_error + "\n")
    cause = paste_report(run_cli, tmp_path, text)["root_cause"]
    assert cause["rule"] == "nccl-error" and cause["rank"] == 9
    assert f"(last error: {last_error})" in cause["message"]

