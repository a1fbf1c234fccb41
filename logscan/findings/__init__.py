"""Rules implemented in code, registered under their catalogue ids.

Each takes the job model and its own catalogue entry and returns findings. The catalogue
entry (rules/<id>.toml, kind = "code") holds the severity, hint and docs.
"""

from __future__ import annotations

from logscan.findings.collision import log_collision
from logscan.findings.launch import (duplicate_node_rank, gpu_count_mismatch, launch_mismatch, missing_worker,
                                   missing_worker_log)
from logscan.findings.processes import missing_rank, world_size_mismatch
from logscan.findings.crashes import (crash_before_first_batch, crash_during_training, restart_loop,
                                    restart_recovered, worker_vanished)
from logscan.findings.exit_status import masked_exit_code, unexplained_failure
from logscan.findings.hangs import collective_timeout, hang_before_first_batch, hang_in_rendezvous
from logscan.findings.stops import stopped_from_outside
from logscan.findings.expectations import (
    expect_finished, expect_first_batch, expect_gpus_per_node, expect_max_warnings,
    expect_time_to_first_batch, expect_workers, expect_world_size)

CODE_RULES = {
    "missing-worker": missing_worker,
    "missing-worker-log": missing_worker_log,
    "duplicate-node-rank": duplicate_node_rank,
    "launch-mismatch": launch_mismatch,
    "gpu-count-mismatch": gpu_count_mismatch,
    "world-size-mismatch": world_size_mismatch,
    "missing-rank": missing_rank,
    "log-collision": log_collision,
    "hang-in-rendezvous": hang_in_rendezvous,
    "hang-before-first-batch": hang_before_first_batch,
    "collective-timeout": collective_timeout,
    "crash-before-first-batch": crash_before_first_batch,
    "crash-during-training": crash_during_training,
    "restart-loop": restart_loop,
    "restart-recovered": restart_recovered,
    "masked-exit-code": masked_exit_code,
    "unexplained-failure": unexplained_failure,
    "worker-vanished": worker_vanished,
    "stopped-from-outside": stopped_from_outside,
    # Expectations (Role.EXPECTATION): called with the run's Expectations and the other
    # findings, by logscan.findings.expectations.expectation_findings, not with the rules above.
    "expect-workers": expect_workers,
    "expect-gpus-per-node": expect_gpus_per_node,
    "expect-world-size": expect_world_size,
    "expect-first-batch": expect_first_batch,
    "expect-finished": expect_finished,
    "expect-time-to-first-batch": expect_time_to_first_batch,
    "expect-max-warnings": expect_max_warnings,
}
