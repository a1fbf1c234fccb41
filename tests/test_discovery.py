"""Finding a job's logs in real layouts. Directory trees are built here (SYNTHETIC) from lines of
the real healthy-2x2 sample, so the layout is what varies."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.config import parse_time
from logscan.files.discovery import discover
from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings

REAL = SAMPLES / "healthy-2x2"
NOW = parse_time(POST_MORTEM_NOW)


def worker_log(n: int) -> bytes:
    return (REAL / f"worker-{n}" / "launch_ddp.log").read_bytes()


def test_real_sample_skips_the_checkpoint_beside_the_logs():
    found = discover([str(REAL)])
    assert [log.display for log in found.logs] == [
        f"{REAL}/worker-0/launch_ddp.log", f"{REAL}/worker-1/launch_ddp.log"]
    assert any(s.endswith("checkpoint.pt") for s in found.skipped)
    assert found.job_status_files


def test_gzip_detected_by_content_not_name(tmp_path):
    (tmp_path / "launch_ddp.0.log").write_bytes(gzip.compress(worker_log(0)))
    (tmp_path / "launch_ddp.1.log").write_bytes(worker_log(1))
    d = diagnose_paths([str(tmp_path)], Settings())
    assert d.healthy and [w.node_rank for w in d.workers] == [0, 1]


def test_rotated_pieces_join_into_one_worker(tmp_path):
    lines = worker_log(0).splitlines(keepends=True)
    (tmp_path / "launch_ddp.log.1").write_bytes(b"".join(lines[:8]))
    (tmp_path / "launch_ddp.log").write_bytes(b"".join(lines[8:]))
    other = tmp_path / "w1"
    other.mkdir()
    (other / "launch_ddp.log").write_bytes(worker_log(1))
    d = diagnose_paths([str(tmp_path)], Settings())
    assert [w.node_rank for w in d.workers] == [0, 1]
    assert len(d.workers[0].files) == 2
    assert d.healthy


def test_log_without_launch_line_is_still_a_worker(tmp_path):
    (tmp_path / "host-a.log").write_bytes(worker_log(0))
    (tmp_path / "host-b.log").write_bytes(b"Traceback (most recent call last):\nKeyError: 'RANK'\n")
    d = diagnose_paths([str(tmp_path)], Settings())
    labels = [w.label for w in d.workers]
    assert f"{tmp_path}/host-b.log" in labels
    assert "missing-worker" in {f.rule for f in d.findings}


def test_files_named_on_the_command_line_form_one_job(tmp_path):
    shutil.copy(REAL / "worker-0" / "launch_ddp.log", tmp_path / "a.log")
    shutil.copy(REAL / "worker-1" / "launch_ddp.log", tmp_path / "b.log")
    d = diagnose_paths([str(tmp_path / "a.log"), str(tmp_path / "b.log")], Settings())
    assert d.healthy and len(d.workers) == 2


def test_tensorboard_and_binary_files_are_skipped_and_named_once(tmp_path):
    shutil.copytree(REAL, tmp_path / "run")
    (tmp_path / "run" / "events.out.tfevents.1700000000.host").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "run" / "notes.out").write_bytes(bytes(range(256)) * 10)
    d = diagnose_paths([str(tmp_path / "run")], Settings())
    assert d.healthy and len(d.inputs) == 1
    assert "run/events.out.tfevents.1700000000.host" in d.inputs[0].path
    assert "run/notes.out" in d.inputs[0].path and "skipped" in d.inputs[0].problem


def _healthy_job(root: Path) -> Path:
    job = root / "job"
    shutil.copytree(SAMPLES / "healthy-2x2", job)
    return job


def test_a_link_out_of_the_job_is_not_followed(tmp_path):
    """Synthetic: a private file and a directory outside the job, linked from inside it."""
    job = _healthy_job(tmp_path)
    secret = tmp_path / "secret.log"
    secret.write_text("Traceback (most recent call last):\nRuntimeError: PRIVATE-TOKEN-123\n")
    (job / "worker-0" / "linked.log").symlink_to(secret)
    (job / "proc").symlink_to("/proc")
    found = discover([str(job)])
    assert all("linked.log" not in log.display for log in found.logs)
    notes = dict(found.notes)
    assert "not followed" in notes[f"{job}/worker-0/linked.log"] and "not followed" in notes[f"{job}/proc"]
    got = diagnose_paths([str(job)], Settings(now=NOW))
    assert all("PRIVATE" not in e.text for f in got.findings for e in f.evidence)


def test_system_trees_are_never_walked():
    found = discover(["/proc/self"])
    assert not found.logs and "not walked" in found.notes[0][1]


def test_a_report_beside_the_logs_and_stray_text_files_are_not_workers(tmp_path):
    job = _healthy_job(tmp_path)
    before = diagnose_paths([str(job)], Settings(now=NOW))
    from conftest import render_human

    (job / "report.txt").write_text(render_human(before))
    (job / "metrics").mkdir()
    (job / "metrics" / "step-000001.txt").write_text("step 1 loss 1.25\n")
    found = discover([str(job)])
    assert sorted(log.display for log in found.logs) == [
        f"{job}/worker-0/launch_ddp.log", f"{job}/worker-1/launch_ddp.log"]
    after = diagnose_paths([str(job)], Settings(now=NOW))
    assert after.summary() == before.summary()


def test_an_oddly_named_excerpt_of_process_group_or_nccl_lines_is_a_log(tmp_path):
    # Synthetic excerpts a user saves as console.txt: torch's NCCL watchdog line (ProcessGroupNCCL.cpp's
    # format string, behind the `[rankN]:` prefix torch adds), and NCCL's own WARN line.
    (tmp_path / "console.txt").write_text(
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, "
        "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n")
    (tmp_path / "nccl.txt").write_text("node-1:168:168 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend "
                                       "/dev/shm/nccl-UbzKZ9 to 9637892 bytes\n")
    (tmp_path / "notes.txt").write_text("rerun on Monday with the larger batch\n")
    found = discover([str(tmp_path)])
    assert sorted(Path(f.display).name for f in found.logs) == ["console.txt", "nccl.txt"]
