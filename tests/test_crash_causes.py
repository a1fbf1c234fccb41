"""Causes and hints that fit the common crash families: the crash names its cause class and gets
that cause's hint, not a generic one.

Synthetic jobs: the real crash-mid-training run with rank 1's exception line replaced by one
built from the message torch, CUDA, the OS or the DataLoader raises (these need a GPU, a full
disk or a killed worker to happen for real); the non-finite loss is the real run's own line.
"""

from __future__ import annotations

import json
import pytest

from conftest import POST_MORTEM_NOW, sample_copy
from logscan.catalogue import load_catalogue

ORIGINAL = "[rank1]: RuntimeError: non-finite loss encountered at step 10 (loss=nan); stopping"
RAISED = {
    "disk-full": "[rank1]: OSError: [Errno 28] No space left on device: '/mnt/out/checkpoint-500/optimizer.pt'",
    "device-ordinal": "[rank1]: torch.AcceleratorError: CUDA error: invalid device ordinal",
    "dataloader-killed": "[rank1]: RuntimeError: DataLoader worker (pid 32117) is killed by signal: Killed. ",
    "non-finite-loss": ORIGINAL,
    "shared-memory": ("[rank1]: RuntimeError: unable to allocate shared memory(shm) for file "
                      "</torch_24676_2346886296_0>: No space left on device (28)"),
    "model-mismatch": ("[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 has 6 "
                       "params, while rank 0 has inconsistent 4 params."),
    # a GPU kernel's assertion (CUDA's device-side __assert_fail format), then the raise it leads to
    "device-assert": ("[rank1]: ../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], "
                      "thread: [99,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
                      "[rank1]: RuntimeError: CUDA error: device-side assert triggered"),
}


# A limit on processes, threads or open files, in each of the shapes its members print it: Python's
# OSError subclasses for EAGAIN and EMFILE, CPython's _thread, the DataLoader's recvfds. The OpenBLAS
# and libgomp lines are C's, printed before the process aborts: they follow the Python exception the
# abort leaves, as in a real log. Built from each message's format string (a real one needs the limit).
RESOURCE_LIMIT = {
    "eagain-fork": "[rank1]: BlockingIOError: [Errno 11] Resource temporarily unavailable",
    "emfile": "[rank1]: OSError: [Errno 24] Too many open files: '/mnt/data/shard-00017.bin'",
    "thread": "[rank1]: RuntimeError: can't start new thread",
    "ancdata": "[rank1]: RuntimeError: received 0 items of ancdata",
    "openblas": ("[rank1]: OpenBLAS blas_thread_init: pthread_create failed for thread 3 of 64: "
                 "Resource temporarily unavailable\n[rank1]: RuntimeError: can't start new thread"),
}


CASES = [(cause, line) for cause, line in sorted(RAISED.items())] + \
    [("resource-limit", line) for _, line in sorted(RESOURCE_LIMIT.items())]


@pytest.mark.parametrize("cause, line", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_a_crash_names_its_cause_and_gets_its_hint(run_cli, tmp_path, cause, line):
    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log", ORIGINAL, line)
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    root = report["root_cause"]
    assert (root["rule"], root["rank"], root["cause"]) == ("crash-during-training", 1, cause)
    # the cause's hint, its place ({where}, shown as `?` unfilled) filled with the Worker's
    template = load_catalogue().cause_hint(cause)
    assert root["hint"].endswith(template.removeprefix("? ")) and "?" not in root["hint"][:3]


# torch's DistBackendError text for an NCCL result (NCCLUtils' getNcclErrorDetailStr: the result's
# interpretation, then "Last error:" and NCCL's own last message), one line each in the log as the
# `[rankN]: ` prefix shows them; the last line is NCCL's shmutils.cc message. Built from those
# format strings: a real one needs GPUs.
NCCL_SHM = "\n".join([
    "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
    "[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    "[rank1]: Last error:",
    "[rank1]: Error while creating shared memory segment /dev/shm/nccl-cjY8K5 (size 10617216)",
])
NCCL_SOCKET = NCCL_SHM.replace("Error while creating shared memory segment /dev/shm/nccl-cjY8K5 (size 10617216)",
                               "socketStartConnect: Connect to 10.0.0.2<43597> failed : Software caused connection abort")


def test_an_nccl_error_explained_by_its_last_error_gets_that_cause_and_its_hint(run_cli, tmp_path):
    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log", ORIGINAL, NCCL_SHM)
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    root = next(f for f in report["findings"] if f["role"] != "consequence")
    assert (root["rule"], root["rank"], root["cause"]) == ("nccl-error", 1, "shared-memory")
    assert root["hint"] == load_catalogue().cause_hint("shared-memory")


def test_an_nccl_error_whose_last_error_names_no_known_cause_keeps_the_rules_hint(run_cli, tmp_path):
    job = sample_copy(tmp_path, "crash-mid-training", "worker-0/launch_ddp.log", ORIGINAL, NCCL_SOCKET)
    report = json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    root = next(f for f in report["findings"] if f["role"] != "consequence")
    assert (root["rule"], root["rank"], root["cause"]) == ("nccl-error", 1, None)
    assert root["hint"] == load_catalogue().rules["nccl-error"].hint


@pytest.mark.parametrize("lines", [
    # CUDA's device-side __assert_fail, from many threads, interleaved; the raise cut off
    ["../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], thread: [99,0,0] "
     "Assertion `srcIndex < srcSelectDimSize` failed.",
     "../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [6,0,0: indexSelectLargeIndex: "
     "block: [58,0,0], thread: [103,0,0] Assertion `srcIndex < srcSelectDimSize` failed."],
    # HIP's (ROCm) `Device-side assertion `%s' failed.`
    ["/pytorch/aten/src/ATen/native/hip/Loss.hip:242: nll_loss_forward_reduce_cuda_kernel_2d: Device-side assertion "
     "`t >= 0 && t < n_classes' failed."] * 3,
])
def test_a_kernels_failed_assertion_alone_is_the_processs_device_side_assert(run_cli, tmp_path, lines):
    """A paste of the kernel's lines only: the process is lost with them (synthetic lines from each
    runtime's __assert_fail format), one failure however many threads told it."""
    (tmp_path / "paste.log").write_text("\n".join(lines) + "\n")
    report = json.loads(run_cli("scan", tmp_path / "paste.log", "--isolated", "--format", "json",
                                "--now", POST_MORTEM_NOW).stdout)
    root = report["root_cause"]
    assert report["verdict"] == "FAILED" and root["cause"] == "device-assert"
    assert "a process on" in root["message"] and "device-side assert triggered" in root["message"]


@pytest.mark.parametrize("line, cause", [
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
     "shared-memory"),
    ("ERROR: Unexpected segmentation fault encountered in worker.", "other"),
])
def test_a_dataloader_workers_own_report_of_its_death_is_a_failure(run_cli, tmp_path, line, cause):
    """torch/csrc/DataLoader.cpp's SIGNAL_HANDLER messages (synthetic lines), the training process's raise
    after them cut off: the worker died, and with it the process's next batch."""
    (tmp_path / "paste.log").write_text("step 3/100 loss 0.51\n" + line + "\n" + line + "\n")
    report = json.loads(run_cli("scan", tmp_path / "paste.log", "--isolated", "--format", "json",
                                "--now", POST_MORTEM_NOW).stdout)
    root = report["root_cause"]
    assert report["verdict"] == "FAILED" and root["cause"] == cause
    assert "a DataLoader worker died" in root["message"] and len(root["evidence"]) == 1


@pytest.mark.parametrize("lines, var", [
    # torch's env:// rendezvous (rendezvous.py, _env_error)
    (["ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK "
      "expected, but not set"], "RANK"),
    # the same with its message cut, its frame naming the variable
    (["Traceback (most recent call last):",
      '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 235, in _env_rendezvous_handler',
      '    rank = int(_get_env_or_raise("RANK"))',
      '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 220, in _get_env_or_raise',
      "    raise _env_error(env_var)", "ValueError: Error initializ"], "RANK"),
    # a script's own os.environ["LOCAL_RANK"]
    (["Traceback (most recent call last):", '  File "train.py", line 12, in <module>',
      '    local_rank = int(os.environ["LOCAL_RANK"])', "KeyError: 'LOCAL_RANK'"], "LOCAL_RANK"),
], ids=["env-error", "cut", "keyerror"])
def test_a_process_started_without_a_launcher_says_which_variable(run_cli, tmp_path, lines, var):
    """Synthetic lines from torch's rendezvous.py message and a script's os.environ lookup."""
    from conftest import paste_report

    cause = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]
    assert cause["cause"] == "no-launcher-env" and cause["hint"].startswith(f"{var} is one of the variables torchrun sets")


def test_a_variable_of_the_scripts_own_keeps_the_env_var_cause(run_cli, tmp_path):
    from conftest import paste_report

    cause = paste_report(run_cli, tmp_path, "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                                            "    root = os.environ[\"DATA_ROOT\"]\nKeyError: 'DATA_ROOT'\n")["root_cause"]
    assert cause["cause"] == "env-var"


@pytest.mark.parametrize("lines", [
    # TCPStore before 1.13 (tcputils.cpp: `host not found: ` + gai_strerror, a ValueError in Python)
    ["Traceback (most recent call last):",
     '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/rendezvous.py", line 199, in _env_rendezvous_handler',
     "    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)",
     "ValueError: host not found: Name or service not known"],
    # the same quoted by mp.spawn for its process 0
    ["-- Process 0 terminated with the following error:", "Traceback (most recent call last):",
     '  File "/opt/conda/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 59, in _wrap',
     "    fn(i, *args)", "ValueError: host not found: Name or service not known"],
], ids=["tcputils", "spawned"])
def test_a_master_address_that_does_not_resolve_is_the_cause(run_cli, tmp_path, lines):
    """Synthetic lines from TCPStore's message."""
    from conftest import paste_report

    cause = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]
    assert cause["cause"] == "master-unresolved" and "MASTER_ADDR does not resolve" in cause["hint"]
