"""Rules implemented in code, registered under their catalogue ids (logscan.rule_ids).

Each takes the job model and its own catalogue entry and returns findings. The catalogue
entry (rules/<id>.toml, kind = "code") holds the severity, hint and docs.
"""

from __future__ import annotations

from logscan import rule_ids as ids
from logscan.findings.collision import log_collision
from logscan.findings.launch import (duplicate_node_rank, gpu_count_mismatch, launch_mismatch, missing_worker,
                                   missing_worker_log)
from logscan.findings.processes import missing_rank, world_size_mismatch
from logscan.findings.crashes import (crash_before_first_batch, crash_during_training, restart_loop,
                                    failure_elsewhere, restart_recovered, worker_vanished)
from logscan.findings.exit_status import masked_exit_code, unexplained_failure
from logscan.findings.hangs import collective_timeout, hang_before_first_batch, hang_in_rendezvous
from logscan.findings.divergence import training_diverged
from logscan.findings.stops import stopped_from_outside
from logscan.findings.stragglers import hang_ended_from_outside, rank_left_early, stall_during_training
from logscan.findings.expectations import (
    expect_finished, expect_first_batch, expect_gpus_per_node, expect_max_warnings,
    expect_time_to_first_batch, expect_workers, expect_world_size)

CODE_RULES = {
    ids.MISSING_WORKER: missing_worker,
    ids.MISSING_WORKER_LOG: missing_worker_log,
    ids.DUPLICATE_NODE_RANK: duplicate_node_rank,
    ids.LAUNCH_MISMATCH: launch_mismatch,
    ids.GPU_COUNT_MISMATCH: gpu_count_mismatch,
    ids.WORLD_SIZE_MISMATCH: world_size_mismatch,
    ids.MISSING_RANK: missing_rank,
    ids.LOG_COLLISION: log_collision,
    ids.HANG_IN_RENDEZVOUS: hang_in_rendezvous,
    ids.HANG_BEFORE_FIRST_BATCH: hang_before_first_batch,
    ids.COLLECTIVE_TIMEOUT: collective_timeout,
    ids.CRASH_BEFORE_FIRST_BATCH: crash_before_first_batch,
    ids.CRASH_DURING_TRAINING: crash_during_training,
    ids.RESTART_LOOP: restart_loop,
    ids.RESTART_RECOVERED: restart_recovered,
    ids.MASKED_EXIT_CODE: masked_exit_code,
    ids.UNEXPLAINED_FAILURE: unexplained_failure,
    ids.WORKER_VANISHED: worker_vanished,
    ids.STOPPED_FROM_OUTSIDE: stopped_from_outside,
    ids.HANG_ENDED_FROM_OUTSIDE: hang_ended_from_outside,
    ids.RANK_LEFT_EARLY: rank_left_early,
    ids.STALL_DURING_TRAINING: stall_during_training,
    ids.FAILURE_ELSEWHERE: failure_elsewhere,
    ids.TRAINING_DIVERGED: training_diverged,
    # Expectations (Role.EXPECTATION): called with the run's Expectations and the other
    # findings, by logscan.findings.expectations.expectation_findings, not with the rules above.
    ids.EXPECT_WORKERS: expect_workers,
    ids.EXPECT_GPUS_PER_NODE: expect_gpus_per_node,
    ids.EXPECT_WORLD_SIZE: expect_world_size,
    ids.EXPECT_FIRST_BATCH: expect_first_batch,
    ids.EXPECT_FINISHED: expect_finished,
    ids.EXPECT_TIME_TO_FIRST_BATCH: expect_time_to_first_batch,
    ids.EXPECT_MAX_WARNINGS: expect_max_warnings,
}
