"""Families that real pastes nobody on the project had seen got wrong, each tested on two members
built from the format strings that print them (not the pastes themselves):

- torch.cuda.nccl's own check (torch/csrc/cuda/nccl.cpp, throw_nccl_error): `NCCL Error <code>:
  <ncclGetErrorString>`, raised as RuntimeError: an NCCL error, not an unexplained crash;
- a progress bar that counts one epoch's batches (Lightning's `Epoch {n}: {percent}|...| {i}/{total}`,
  from its tqdm progress bar's description) is no end of the run; a run's own count at its total is;
- a stop from outside three seconds after a process's last line is a stop, not a stall;
- torchrun stopping processes after the run's last step (`Sending process N closing signal SIGTERM`,
  torch/distributed/elastic/multiprocessing/api.py) with no death signal of its own: the siblings of a
  process that failed, so the job is not HEALTHY.
"""

from __future__ import annotations

import json

import pytest



def scan(run_cli, tmp_path, text: str, status: str | None = None) -> dict:
    (tmp_path / "job").mkdir(exist_ok=True)
    (tmp_path / "job" / "launch_ddp.log").write_text(text)
    if status:
        (tmp_path / "job" / "job_status").write_text(status + "\n")
    # Judged now, as the files were just written: a post-mortem clock would see a stall in them.
    result = run_cli("scan", tmp_path / "job", "--format", "json", "--isolated")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("code, reason", [(2, "unhandled system error"), (1, "unhandled cuda error"),
                                          (3, "internal error")])
def test_torch_cuda_nccls_own_error_is_an_nccl_error(run_cli, tmp_path, code, reason):
    report = scan(run_cli, tmp_path, "Traceback (most recent call last):\n"
                  '  File "train.py", line 80, in <module>\n    model = DDP(model)\n'
                  f"RuntimeError: NCCL Error {code}: {reason}\n")
    assert report["root_cause"]["rule"] == "nccl-error", report["findings"]
    assert reason in report["root_cause"]["message"]


BANNER = ("WARNING:torch.distributed.run:Setting OMP_NUM_THREADS environment variable for each process to be 1 "
          "in default, to avoid your system being overloaded, please further tune the variable for optimal "
          "performance in your application as needed.\n")


@pytest.mark.parametrize("bar, finished", [
    ("Epoch 2: 100%|##########| 3/3 [00:00<00:00, 40.11it/s, loss=0.5, v_num=0]", False),
    ("Epoch 0: 100%|##########| 120/120 [00:31<00:00,  3.80it/s, loss=1.22]", False),
    ("step 30/30 loss 1.4118", True),
    ("100%|##########| 2209/2209 [39:03<00:00,  1.06s/it]", True),
    # pytorch/examples' MNIST (`Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}`), an epoch's last batch
    ("Train Epoch: 0 [7010/7010 (100%)]\tLoss: 0.096523", False),
    ("Train Epoch: 3 [60000/60000 (100%)]\tLoss: 0.012", False),
])
def test_an_epochs_bar_at_its_total_is_no_end_of_the_run(run_cli, tmp_path, bar, finished):
    report = scan(run_cli, tmp_path, BANNER + "Epoch 0: 50%|#####     | 1/2 [00:00<00:00]\n" + bar + "\n")
    assert report["verdict"] == ("HEALTHY" if finished else "INCONCLUSIVE"), report["verdict_reason"]


STOP = ("W1130 12:13:{s:02d}.388000 124326 torch/distributed/elastic/agent/server/api.py:723] Received 15 death "
        "signal, shutting down workers\n"
        "W1130 12:13:{s:02d}.389000 124326 torch/distributed/elastic/multiprocessing/api.py:900] Sending process "
        "124533 closing signal SIGTERM\n")


@pytest.mark.parametrize("own_line", [
    "[default0]:I1130 12:13:46.100000 124533 train.py:88] Waiting for training batch to arrive",
    "[default0]:I1130 12:13:46.100000 124533 train.py:91] rank 0: reloading shard list",
])
def test_a_stop_seconds_after_a_lone_workers_last_line_is_a_stop(run_cli, tmp_path, own_line):
    """One Worker, no peer to differ from, and torchrun's SIGTERM three seconds after its process's
    last line: the job was stopped, nothing shows a stall."""
    text = (BANNER + "[default0]:I1130 12:13:40.000000 124533 train.py:80] step 1/100 loss 2.1\n"
            + own_line + "\n" + STOP.format(s=49))
    report = scan(run_cli, tmp_path, text, status="failed")
    assert report["root_cause"]["rule"] == "stopped-from-outside", report["findings"]
    assert "hang-ended-from-outside" not in {f["rule"] for f in report["findings"]}


@pytest.mark.parametrize("signal, glue", [("SIGTERM", "\n"), ("SIGKILL", "\n"),
                                          # a paste that lost its newline after the bar
                                          ("SIGTERM", "")])
def test_torchrun_stopping_processes_after_the_last_step_is_no_healthy_run(run_cli, tmp_path, signal, glue):
    text = (BANNER + "100%|##########| 2209/2209 [39:03<00:00,  1.06s/it]" + glue +
            f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4041 closing signal {signal}\n"
            f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4042 closing signal {signal}\n")
    report = scan(run_cli, tmp_path, text)
    assert report["verdict"] != "HEALTHY", report["verdict_reason"]
    # (a lone bar at its total is not taken for the run's end: the stop is told from the line)
    if signal == "SIGTERM":
        # torchrun's first stop, with no signal of its own before it and nothing of the run after
        # it: it followed a failure
        assert report["verdict"] == "FAILED", report["verdict_reason"]
        assert "torchrun stopped the other processes after it" in report["root_cause"]["message"]
        assert "Sending process 4041 closing signal SIGTERM" in report["root_cause"]["evidence"][0]["text"]
    else:
        assert "stopped its processes" in report["verdict_reason"] and "launch_ddp.log:3" in report["verdict_reason"]


# transformers' and accelerate's testing_utils (_stream_subprocess, execute_subprocess_async): every
# line of the launcher's output echoed as `print(label, line)` with label `stdout:` / `stderr:`, then
# `RuntimeError: '{cmd_str}' failed with returncode {code}` with the workers' stderr after it.
SUMMARY = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
test_script.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2023-05-24_08:14:43
  host      : node-17
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 2412)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================"""


@pytest.mark.parametrize("label", ["stderr:", "stdout:"])
def test_a_test_harness_echo_is_read_through_and_its_own_report_names_no_process(run_cli, tmp_path, label):
    echoed = "\n".join(f"{label} {line}" for line in SUMMARY.splitlines())
    text = (echoed + "\nTraceback (most recent call last):\n  File \"test_multigpu.py\", line 56, in test_run\n"
            "    execute_subprocess_async(cmd, env=os.environ.copy())\n"
            "RuntimeError: 'accelerate-launch --num_processes=2 test_script.py' failed with returncode 1\n")
    report = scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rank"] == 1, report["root_cause"]
    assert "accelerate-launch" not in report["root_cause"]["message"]


@pytest.mark.parametrize("end, healthy", [
    ("Training time 1 day, 15:01:41", True),
    ("Training time: 0:42:07", True),
    # a timer of each step is no end of the loop
    ("Training time: 0:00:01 per iteration", False),
])
def test_the_reference_scripts_training_time_ends_the_run(run_cli, tmp_path, end, healthy):
    """torchvision's references and DeiT/MAE print `Training time {str(timedelta)}` after the last epoch
    (synthetic lines in their MetricLogger's and that print's form)."""
    text = (BANNER + "Epoch: [299]  [1250/1251]  eta: 0:00:00  lr: 0.000001  loss: 2.8745 (2.9012)\n"
            "Max accuracy: 75.19%\n" + end + "\n")
    assert (scan(run_cli, tmp_path, text)["verdict"] == "HEALTHY") is healthy
