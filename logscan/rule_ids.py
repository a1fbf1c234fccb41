"""The rule and signal ids that code names, each declared once here. Everything else about a rule
(its role, precedence, cause class, whether its line means a cascade) is data in its catalogue
file; tests check that each id here is in the catalogue, and that every code rule there has its
function in `logscan.findings.CODE_RULES`, keyed by these names."""

from __future__ import annotations

# Code rules: the job model's shape.
MISSING_WORKER = "missing-worker"
MISSING_WORKER_LOG = "missing-worker-log"  # a collection gap: the Worker ran, its log is not here
DUPLICATE_NODE_RANK = "duplicate-node-rank"
LAUNCH_MISMATCH = "launch-mismatch"
GPU_COUNT_MISMATCH = "gpu-count-mismatch"
WORLD_SIZE_MISMATCH = "world-size-mismatch"
MISSING_RANK = "missing-rank"
LOG_COLLISION = "log-collision"
# Code rules: what the processes did.
HANG_IN_RENDEZVOUS = "hang-in-rendezvous"
HANG_BEFORE_FIRST_BATCH = "hang-before-first-batch"
COLLECTIVE_TIMEOUT = "collective-timeout"
CRASH_BEFORE_FIRST_BATCH = "crash-before-first-batch"
CRASH_DURING_TRAINING = "crash-during-training"
RESTART_LOOP = "restart-loop"
RESTART_RECOVERED = "restart-recovered"
MASKED_EXIT_CODE = "masked-exit-code"
UNEXPLAINED_FAILURE = "unexplained-failure"
WORKER_VANISHED = "worker-vanished"
STOPPED_FROM_OUTSIDE = "stopped-from-outside"
HANG_ENDED_FROM_OUTSIDE = "hang-ended-from-outside"
STALL_DURING_TRAINING = "stall-during-training"
RANK_LEFT_EARLY = "rank-left-early"
TRAINING_DIVERGED = "training-diverged"
FAILURE_ELSEWHERE = "failure-elsewhere"  # a lost peer, with the failure that caused it out of view
# A signature rule code defers to: torchrun's own report of a SIGKILLed process.
WORKER_KILLED = "worker-killed"
# Code rules of role "expectation": what a gate asked for (logscan.expectations.EXPECTATIONS).
EXPECT_WORKERS = "expect-workers"
EXPECT_GPUS_PER_NODE = "expect-gpus-per-node"
EXPECT_WORLD_SIZE = "expect-world-size"
EXPECT_FIRST_BATCH = "expect-first-batch"
EXPECT_FINISHED = "expect-finished"
EXPECT_TIME_TO_FIRST_BATCH = "expect-time-to-first-batch"
EXPECT_MAX_WARNINGS = "expect-max-warnings"

# Signature rules whose lines code reads beyond the message (catalogue.GROUPS_READ).
COLLECTIVE_MISMATCH = "collective-mismatch"

# Signals that code rules read for what they mean in particular.
COLLECTIVE_TIMEOUT_LINE = "collective-timeout-line"
DEATH_SIGNAL_RECEIVED = "death-signal-received"
# Slurm cancelling a step because one of its tasks failed: srun's Terminated tasks are its victims.
SLURM_STEP_TASK_FAILURE = "slurm-step-task-failure"
CAUSE_OOM_KILL = "cause-oom-kill"  # the scheduler's word that its cgroup OOM-killed tasks
SIBLING_TERMINATED = "sibling-terminated"
STORE_TIMEOUT = "store-timeout"
CONNECT_FAILED = "connect-failed"
PEER_LOST = "peer-lost"
WORKER_GROUP_RESTART = "worker-group-restart"
RENDEZVOUS_ROUND = "rendezvous-round"
ERROR_LINE = "error-line"
WORKER_GROUP_SUCCEEDED = "worker-group-succeeded"
# A training framework's own word that its loop reached the end (Lightning, the HF Trainer).
TRAINING_LOOP_FINISHED = "training-loop-finished"
# A loss that is not finite, fp16 loss scaling skipping a step: what training-diverged reads.
LOSS_NOT_FINITE = "loss-not-finite"
# torchrun's start-up banner: a Worker's "torchrun started" timeline mark.
TORCHRUN_STARTED = "torchrun-started"
# init_process_group waiting in its store barrier for the others to check in
PROCESS_GROUP_WAITING = "process-group-waiting"
# a process's word that it joined its distributed world (a store barrier passed, a framework's init)
PROCESS_GROUP_JOINED = "process-group-joined"

# What a process waiting on others reports: evidence that it was waiting, not failing.
WAITING_EVIDENCE = (COLLECTIVE_TIMEOUT_LINE, DEATH_SIGNAL_RECEIVED, STORE_TIMEOUT, CONNECT_FAILED, PEER_LOST)
