"""Rules implemented in code, registered under their catalogue ids.

Each check takes the job model and its own catalogue entry and returns findings. The catalogue
entry (rules/<id>.toml, kind = "code") holds the severity, hint and docs.
"""

from __future__ import annotations

from logscan.checks.collision import log_collision
from logscan.checks.launch import duplicate_node_rank, gpu_count_mismatch, launch_mismatch, missing_worker
from logscan.checks.processes import missing_rank, world_size_mismatch

CHECKS = {
    "missing-worker": missing_worker,
    "duplicate-node-rank": duplicate_node_rank,
    "launch-mismatch": launch_mismatch,
    "gpu-count-mismatch": gpu_count_mismatch,
    "world-size-mismatch": world_size_mismatch,
    "missing-rank": missing_rank,
    "log-collision": log_collision,
}
