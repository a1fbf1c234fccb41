"""Where a Worker stopped: launch → rendezvous → init (processes spawned) → training."""

from __future__ import annotations

from logscan.model import Job, Worker


def worker_stage(job: Job, worker: Worker) -> str:
    if not worker.ran_torchrun:
        return "launch"
    if not worker.started_processes:
        return "rendezvous"
    if not job.reached_first_batch(worker):
        return "init"
    return "training"
