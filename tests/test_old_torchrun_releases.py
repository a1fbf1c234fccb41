"""What torchrun 1.9 to 1.12 print, and what their silence does not mean.

Real samples (production shape, CPU gloo runs of the released wheels): `*-torch1.9-prod` (torch 1.9.1,
`python -m torch.distributed.run`), `*-torch1.10-prod`, `*-torch1.11-prod`, `*-torch1.12-prod`, and
`torchrun-exit-segfault-torch1.11-prod` (1.11 under Python 3.10, whose torchrun dies of SIGSEGV in
its exit barrier). Tests that change a real sample's lines say so; they are synthetic inputs.

- torch 1.9's failure summary is its own table (`Root Cause:` first, fields unpadded) and its torchrun
  stops a failed group's other processes without a word: `Sending process N closing signal SIGTERM`
  came with 1.10. A rank that 1.9's report leaves out may have been stopped unseen, so it is not
  known to have left by itself (rank-left-early).
- Two ranks that give up at the same instant can interleave their tracebacks past reading (1.9's
  import-error run); when a Worker's only readable error lines are waits that gave up, its failed exits
  are those waits, not crashes of their own.
- A log that ends on an error of its own (bash's report of a segfault, Python's `Fatal Python error`)
  did not just stop: the job was not ended from outside while it stalled.
"""

from __future__ import annotations

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES, job_model, sample_copy
from logscan.config import parse_time
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings


def diagnose(path):
    return diagnose_paths([str(path)], Settings(now=parse_time(POST_MORTEM_NOW)))


def _summary_exits(job):
    return [e for w in job.workers for e in w.exits if e.rank is not None]


def test_torch_1_9s_table_tells_a_torchrun_that_logs_no_stop():
    old = _summary_exits(job_model(SAMPLES / "stall-mid-training-torch1.9-prod"))
    assert old and all(e.silent_stops for e in old)
    for newer in ("stall-mid-training-torch1.10-prod", "crash-mid-training-torch1.12-prod"):
        exits = _summary_exits(job_model(SAMPLES / newer))
        assert exits and not any(e.silent_stops for e in exits), newer


def test_a_stall_under_torch_1_9_names_the_straggler_not_a_rank_that_left():
    """Real: rank 1 sleeps at step 8; 1.9's torchrun on node 0 reports rank 0's timeout only
    (`Other Failures: <NO_OTHER_FAILURES>`) and stops rank 1 unseen."""
    got = diagnose(SAMPLES / "stall-mid-training-torch1.9-prod")
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == ("collective-timeout", 0, 1)
    assert "rank-left-early" not in {f.rule for f in got.findings}


STALL_1_10 = "stall-mid-training-torch1.10-prod"
CLOSING = "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 13088 closing signal SIGTERM\n"


def test_a_torchrun_that_logs_its_stops_and_stopped_none_lets_the_unreported_rank_have_left(tmp_path):
    """Synthetic (a real 1.10 sample without its closing-signal line): torchrun 1.10 logs every
    process it stops, so a rank its report leaves out that it did not stop exited by itself."""
    job = sample_copy(tmp_path, STALL_1_10, "worker-0/launch_ddp.log", CLOSING, "")
    got = diagnose(job)
    assert (got.root_cause.rule, got.root_cause.rank) == ("rank-left-early", 1)


def test_the_same_report_in_torch_1_9s_table_does_not(tmp_path):
    """Synthetic: the job above with node 0's report written as torch 1.9 writes it (unpadded
    fields): a 1.9 torchrun stops processes unseen, so rank 1 may have been stopped."""
    job = sample_copy(tmp_path, STALL_1_10, "worker-0/launch_ddp.log", CLOSING, "")
    log = job / "worker-0" / "launch_ddp.log"
    log.write_text(log.read_text().replace("  rank      : ", "  rank: ").replace("  exitcode  : ", "  exitcode: "))
    got = diagnose(job)
    assert "rank-left-early" not in {f.rule for f in got.findings}
    assert (got.root_cause.rule, got.root_cause.rank) == ("collective-timeout", 1)


# --- a log that ends on its own crash -------------------------------------------------------------

def test_torchruns_segfault_after_training_is_no_stall_ended_from_outside():
    """Real: torch 1.11 under Python 3.10; node 0's torchrun dies of SIGSEGV in its exit barrier
    after training finished: torchrun's own crash (faulthandler's dump over its frames and bash's
    report of its command, one death), not a training process's, and not a stall."""
    got = diagnose(SAMPLES / "torchrun-exit-segfault-torch1.11-prod")
    assert got.verdict == "FAILED"
    root = got.root_cause
    assert root.message.startswith("torchrun on node 0 was killed by SIGSEGV")
    assert "in its exit barrier, after its processes had all exited 0" in root.message
    assert root.hint.startswith("torchrun itself")
    assert not {"hang-ended-from-outside", "stopped-from-outside"} & {f.rule for f in got.findings}
    assert len([f for f in got.findings if f.severity == "error"]) == 1


@pytest.mark.parametrize("ending", [
    "/opt/job/launch_ddp.sh: line 21: 17202 Segmentation fault      (core dumped) torchrun --nproc_per_node=2 train.py",
    "/opt/job/launch_ddp.sh: line 21: 17202 Aborted                 (core dumped) python -m torch.distributed.run train.py",
])
def test_the_shells_report_of_torchruns_crash_is_torchruns_own(run_cli, tmp_path, ending):
    """bash's job report of the torchrun command ended by a crashing signal (synthetic line, bash's
    `%s: line %d: %5d %s %s` format): torchrun's death, not a training process's."""
    from conftest import paste_report
    text = ("W1129 18:47:52.045000 4351 torch/distributed/run.py:803] Setting OMP_NUM_THREADS environment variable "
            "for each process to be 1 in default\nstep 3/10 loss 0.5\n" + ending + "\n")
    root = paste_report(run_cli, tmp_path, text)["root_cause"]
    assert root["message"].startswith("torchrun on ") and root["hint"].startswith("torchrun itself")


@pytest.mark.parametrize("ending", [
    "/opt/job/launch_ddp.sh: line 21: 17202 Segmentation fault      torchrun --nproc_per_node=2 train.py\n",
    "/opt/job/launch_ddp.sh: line 21: 17202 Aborted                 (core dumped) torchrun train.py\n",
    "Fatal Python error: Segmentation fault\n",
])
def test_a_worker_log_ending_on_its_own_crash_did_not_just_stop(tmp_path, ending):
    """Synthetic: a real healthy 1.12 run whose node 1 log ends on a crash report, the platform
    saying failed."""
    job = sample_copy(tmp_path, "healthy-2x2-torch1.12-prod", "worker-1/launch_ddp.log", None, ending)
    (job / "job_status").write_text("failed\n")
    got = diagnose(job)
    assert got.verdict == "FAILED"
    assert not {"hang-ended-from-outside", "stopped-from-outside"} & {f.rule for f in got.findings}


# --- uneven GPU counts told by torchrun's own lines -----------------------------------------------

def test_uneven_nproc_per_node_from_torchruns_info_lines_is_a_gpu_count_mismatch():
    """Real (torch 2.13, LOGLEVEL=INFO, no launch line): node 0 runs 2 processes, node 1 one; the
    world of 3 is torchrun's own, not a launch line's arithmetic gone wrong."""
    got = diagnose(SAMPLES / "gpu-count-mismatch-prod-quiet-info")
    assert got.root_cause.rule == "gpu-count-mismatch"
    assert "world of 3" in got.root_cause.message
    assert "launch-mismatch" not in {f.rule for f in got.findings}


def test_a_launch_lines_own_arithmetic_is_still_checked(tmp_path):
    """Synthetic: a real launch line whose total_procs is not nnodes x gpus_per_node."""
    job = sample_copy(tmp_path, "healthy-2x2-torch1.12-prod", "worker-1/launch_ddp.log",
                      "gpus_per_node=2 total_procs=4", "gpus_per_node=2 total_procs=3")
    got = diagnose(job)
    assert any(f.rule == "launch-mismatch" and "total_procs=3" in f.message for f in got.findings)


# --- tracebacks interleaved past reading ------------------------------------------------------------

IMPORT_1_9 = "import-error-one-rank-torch1.9-prod"


def test_a_worker_whose_only_readable_errors_are_waits_failed_waiting():
    """Real (torch 1.9.1): rank 3 on node 1 dies of ModuleNotFoundError; node 0's two ranks give up in
    init_process_group at the same instant and their tracebacks interleave into one another
    (`RuntimeErrorpg = ProcessGroupGloo(: `, `Socket TimeoutRuntimeError`, `: Socket Timeout`), so no
    exception line of theirs can be read; only the store wait can. Their exits are those waits."""
    got = diagnose(SAMPLES / IMPORT_1_9)
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
        "crash-before-first-batch", 1, 3)
    victims = [f for f in got.findings if f.cascade and f.node_rank in (0, None) and f.ranks == (0, 1)]
    assert victims and "failed with exit code 1" in victims[0].message


def test_the_same_with_another_releases_store_wait(tmp_path):
    """Synthetic: the run above with node 0's one readable wait in torch 2.x's words."""
    job = sample_copy(tmp_path, IMPORT_1_9, "worker-0/launch_ddp.log", ": Socket Timeout\n",
                      ": wait timeout after 20000ms, keys: /default_pg/0//cpu//0/3\n")
    got = diagnose(job)
    assert (got.root_cause.rule, got.root_cause.rank) == ("crash-before-first-batch", 3)


def test_a_cause_on_the_same_worker_is_not_a_wait(tmp_path):
    """Synthetic: node 0 also shows a cause of its own (a missing file): its failed exits are not
    waits, and that cause stands beside node 1's."""
    job = sample_copy(tmp_path, IMPORT_1_9, "worker-0/launch_ddp.log", ": Socket Timeout\n",
                      ": Socket Timeout\nFileNotFoundError: [Errno 2] No such file or directory: "
                      "'/mnt/public/project-a/data/train/shard-00000-of-00004.jsonl'\n")
    got = diagnose(job)
    own = [f for f in got.findings if f.node_rank == 0 and not f.cascade]
    assert own, [(f.rule, f.node_rank, f.rank, f.cascade) for f in got.findings]


# --- a stop that only the shell tells ---------------------------------------------------------------

STOP_1_9 = "sigterm-every-torchrun-torch1.9-prod"


def test_a_torchrun_that_handles_no_signal_is_stopped_as_its_shell_says():
    """Real (torch 1.9.1): SIGTERM to each Worker's torchrun at step 10; 1.9's torchrun has no handler
    and dies without a line, and node 1's shell reports `Terminated`."""
    got = diagnose(SAMPLES / STOP_1_9)
    assert (got.root_cause.rule, got.root_cause.node_rank) == ("stopped-from-outside", 1)
    assert "SIGTERM" in got.root_cause.message
    assert "hang-ended-from-outside" not in {f.rule for f in got.findings}


def test_a_shell_that_names_the_command_it_lost_to_a_hangup(tmp_path):
    """Synthetic: the run above with bash's report of a SIGHUP, the command after it."""
    job = sample_copy(tmp_path, STOP_1_9, "worker-1/launch_ddp.log", "Terminated\n",
                      "/opt/job/launch_ddp.sh: line 21:  4242 Hangup                  python -m "
                      "torch.distributed.run --nproc_per_node=2 train.py\n")
    got = diagnose(job)
    assert got.root_cause.rule == "stopped-from-outside" and "SIGHUP" in got.root_cause.message
