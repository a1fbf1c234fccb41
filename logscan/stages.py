"""Where a Worker stopped: launch → rendezvous → init (processes spawned) → training."""

from __future__ import annotations

from logscan.model import Worker


def worker_stage(worker: Worker) -> str:
    if worker.launch is None:
        return "launch"
    if not worker.started_processes:
        return "rendezvous"
    if not worker.reached_first_batch:
        return "init"
    return "training"
