"""Rules on layouts and training loops the samples do not cover. Each input here is SYNTHETIC:
a real sample log (named) edited as stated, so the lines stay torch 2.13's own."""

from __future__ import annotations

from conftest import SAMPLES
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings


def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _lines(sample: str, worker: str) -> list[bytes]:
    return (SAMPLES / sample / worker / "launch_ddp.log").read_bytes().splitlines(keepends=True)


def test_a_launch_script_without_a_shape_line_still_gets_stage_rules(tmp_path):
    # missing-worker sample with the DDP launch lines removed: torchrun's own rendezvous timeout
    # must still place both Workers in rendezvous.
    for worker in ("worker-0", "worker-1"):
        kept = [l for l in _lines("missing-worker", worker) if b"DDP launch:" not in l]
        _write(tmp_path, f"{worker}.log", b"".join(kept))
    d = diagnose_paths([str(tmp_path)], Settings())
    rules = {f.rule for f in d.findings}
    assert "hang-in-rendezvous" in rules and not d.healthy


def test_an_exception_the_training_survived_is_not_a_crash(tmp_path):
    # healthy-2x2 worker-0 with a handled, logged exception inserted before its progress lines.
    lines = _lines("healthy-2x2", "worker-0")
    at = next(i for i, l in enumerate(lines) if l.startswith(b"step "))
    lines[at:at] = [b"Traceback (most recent call last):\n",
                    b'  File "train.py", line 10, in fetch\n',
                    b"ConnectionResetError: [Errno 104] Connection reset by peer\n",
                    b"retrying download of tokenizer files\n"]
    _write(tmp_path, "worker-0/launch_ddp.log", b"".join(lines))
    _write(tmp_path, "worker-1/launch_ddp.log", b"".join(_lines("healthy-2x2", "worker-1")))
    d = diagnose_paths([str(tmp_path)], Settings())
    assert d.healthy, [f.message for f in d.findings]


def test_a_large_world_names_ranks_as_ranges(tmp_path):
    from logscan.findings.base import plural

    assert plural(list(range(512)), "rank", "ranks") == "ranks 0-511"
    assert plural([0, 1, 5, 6, 7, 9], "rank", "ranks") == "ranks 0, 1, 5-7, 9"
    assert plural([3], "rank", "ranks") == "rank 3"


def test_progress_in_an_error_message_is_not_progress(tmp_path):
    # masked-upload-sleep worker-1 alone: its only `step N` text is inside the exception line.
    data = (SAMPLES / "masked-upload-sleep" / "worker-1" / "launch_ddp.log").read_bytes()
    _write(tmp_path, "launch_ddp.log", data)
    d = diagnose_paths([str(tmp_path)], Settings())
    assert d.reached_first_batch is False


def test_a_stray_text_file_beside_the_logs_is_no_extra_worker(tmp_path):
    # healthy-2x2 copied, plus a notes file with no launch line and no torchrun output.
    for worker in ("worker-0", "worker-1"):
        _write(tmp_path, f"{worker}/launch_ddp.log", b"".join(_lines("healthy-2x2", worker)))
    _write(tmp_path, "notes.txt", b"lr sweep 3e-4, batch 32\nrerun after the data fix\n")
    d = diagnose_paths([str(tmp_path)], Settings())
    assert "launch-mismatch" not in {f.rule for f in d.findings}
    assert d.healthy


def test_a_damaged_failure_line_keeps_a_trained_job_from_healthy(tmp_path):
    """Synthetic: the real healthy-2x2 logs cut after their first steps, and on node 0 a torchrun
    failure line damaged mid-way. No rule explains it, so the verdict is not HEALTHY."""
    from conftest import SAMPLES

    for node in (0, 1):
        lines = (SAMPLES / "healthy-2x2" / f"worker-{node}" / "launch_ddp.log").read_text().splitlines()[:12]
        if node == 0:
            lines.append("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank")
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text("\n".join(lines) + "\n")
    got = diagnose_paths([str(tmp_path)], Settings())
    assert got.verdict == "INCONCLUSIVE" and "exitcode: -9" in got.verdict_reason
    failed = diagnose_paths([str(tmp_path)], Settings(job_status="failed"))
    assert failed.verdict == "FAILED" and failed.root_cause.rule == "unexplained-failure"


def test_a_hostile_launch_line_builds_nothing_per_claimed_node(tmp_path):
    """Synthetic: the real healthy-2x2 Worker 0 log with its launch line claiming 2,000,000,000
    Workers (and another with absurd GPUs): the claim is reported, not allocated."""
    from conftest import SAMPLES

    real = (SAMPLES / "healthy-2x2" / "worker-0" / "launch_ddp.log").read_text()
    for field, value in (("nnodes=2 ", "nnodes=2000000000 "), ("gpus_per_node=2", "gpus_per_node=" + "9" * 5000)):
        (tmp_path / "launch_ddp.log").write_text(real.replace(field, value, 1))
        got = diagnose_paths([str(tmp_path)], Settings())
        root = got.root_cause
        assert root is not None and root.rule == "launch-mismatch" and "more than any job has" in root.message


def test_a_traceback_that_lost_its_header_is_still_read(tmp_path):
    """Synthetic: the real crash-mid-training logs with every `Traceback (most recent call
    last):` line cut, as a pasted excerpt loses it; and a three-line paste of an OOM raised in
    the backward pass. The crash, its rank and its stage are still found."""
    from conftest import SAMPLES

    for node in (0, 1):
        real = (SAMPLES / "crash-mid-training" / f"worker-{node}" / "launch_ddp.log").read_text()
        cut = "\n".join(l for l in real.splitlines() if "Traceback (most recent" not in l)
        (tmp_path / f"worker-{node}").mkdir()
        (tmp_path / f"worker-{node}" / "launch_ddp.log").write_text(cut + "\n")
    got = diagnose_paths([str(tmp_path)], Settings(job_status="failed"))
    assert (got.root_cause.rule, got.root_cause.node_rank, got.root_cause.rank) == (
        "crash-during-training", 0, 1), got.summary()

    paste = tmp_path / "paste"
    paste.mkdir()
    (paste / "incident.log").write_text(
        "[rank3]:     loss.backward()\n"
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    got = diagnose_paths([str(paste)], Settings())
    stages = {f.rule for f in got.findings}
    assert "crash-during-training" in stages and "crash-before-first-batch" not in stages


def test_restart_loop_names_the_first_failure_of_a_rotated_log(tmp_path):
    # restart-loop worker-0 cut after its first restart into a rotated pair: the older piece
    # `launch_ddp.log.1` holds the first attempt's failure, the live `launch_ddp.log` the later
    # attempts. By name the live file sorts first; by age the first failure is in `.log.1`.
    lines = _lines("restart-loop", "worker-0")
    cut = next(i for i, l in enumerate(lines) if b"attempts left" in l) + 1
    older = _write(tmp_path, "worker-0/launch_ddp.log.1", b"".join(lines[:cut]))
    _write(tmp_path, "worker-0/launch_ddp.log", b"".join(lines[cut:]))
    _write(tmp_path, "worker-1/launch_ddp.log", b"".join(_lines("restart-loop", "worker-1")))
    d = diagnose_paths([str(tmp_path)], Settings())
    loop = next(f for f in d.findings if f.rule == "restart-loop" and f.node_rank == 0)
    first = next(i for i, l in enumerate(lines) if b"RuntimeError: rank 0" in l) + 1
    assert (loop.evidence[0].file, loop.evidence[0].line) == (str(older), first)
    assert "first failure: RuntimeError: rank 0: could not open metrics writer" in loop.message
