"""A Worker whose log is empty while another Worker's holds torchrun's start-up banner: torchrun
prints the banner whenever it starts more than one process, so the empty Worker started one or
none, and a job that trained is not shown HEALTHY (an uneven GPU count with no launch line to
say it). Real samples, their optional lines removed or one file emptied, as the tests say."""

from __future__ import annotations

import json
import shutil

from conftest import POST_MORTEM_NOW, SAMPLES

BANNER = b"OMP_NUM_THREADS"


def _copy(tmp_path, sample: str, drop: tuple[bytes, ...] = ()):
    job = tmp_path / sample
    shutil.copytree(SAMPLES / sample, job, ignore=shutil.ignore_patterns("expected.json"))
    for log in job.rglob("*.log"):
        log.write_bytes(b"\n".join(line for line in log.read_bytes().split(b"\n")
                                    if not any(word in line for word in drop)))
    return job


def _verdict(run_cli, job) -> dict:
    return json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


def test_uneven_gpus_without_launch_lines_are_not_called_healthy(run_cli, tmp_path):
    # Worker 0 has 2 GPUs, Worker 1 one: with the launch lines and env prints gone, Worker 1's log
    # is empty and Worker 0's holds the banner and a finished run.
    job = _copy(tmp_path, "gpu-count-mismatch", drop=(b"DDP launch:", b"torchrun env:"))
    assert (job / "worker-1" / "launch_ddp.log").read_bytes().strip() == b""
    report = _verdict(run_cli, job)
    assert report["verdict"] == "INCONCLUSIVE" and "torchrun's banner" in report["verdict_reason"]


def test_one_process_per_worker_prints_no_banner_and_a_silent_peer_is_then_no_evidence(run_cli, tmp_path):
    # A healthy job whose Workers each start one process prints no banner anywhere; rank 0 alone
    # logs, so Worker 1's log is empty: HEALTHY as before.
    job = _copy(tmp_path, "healthy-2x2-prod", drop=(BANNER,))
    (job / "worker-1" / "launch_ddp.log").write_bytes(b"")
    assert _verdict(run_cli, job)["verdict"] == "HEALTHY"


def test_an_empty_file_that_is_no_peer_workers_log_changes_nothing(run_cli, tmp_path):
    job = _copy(tmp_path, "healthy-2x2-prod")
    (job / "worker-1" / "stderr.log").write_bytes(b"")
    assert _verdict(run_cli, job)["verdict"] == "HEALTHY"
