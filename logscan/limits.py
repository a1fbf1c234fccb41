"""The defaults and limits logscan runs with, each stated once: what a setting is when nobody
sets it, and how far a value or an input may go before it is refused or given up on."""

from __future__ import annotations

from datetime import timedelta

# A log quiet for this long counts as stalled (--stall-after, stall-after).
STALL_AFTER = timedelta(minutes=30)
# A running job whose lines carry times is stalled once it has been quiet this many times its own
# step interval, and at least STALL_RHYTHM_FLOOR (an evaluation or a checkpoint pauses the steps
# for minutes): a cron sweep then alerts within minutes, not after NCCL's 30 min timeout.
STALL_RHYTHM_FACTOR = 100
STALL_RHYTHM_FLOOR = timedelta(minutes=10)
# A stop from outside that comes after this much silence, and after STOP_SILENCE_FACTOR times the
# interval between the job's logged steps, ended a stall: a platform's cancel or preemption lands
# between two steps, not half a minute and twenty steps after the last.
STOP_SILENCE = timedelta(seconds=30)
STOP_SILENCE_FACTOR = 20
# torchrun's static rendezvous gives up within this (its store's 900 s default, PET_RDZV_CONF's
# timeout usually less): Workers quiet for longer since start-up, none of them waiting, had met.
RENDEZVOUS_GIVES_UP = timedelta(minutes=15)
# No duration a user gives (--stall-after, --max-time-to-first-batch) may be longer.
MAX_DURATION = timedelta(days=30)
# Scanning processes (--jobs); 0 means one per core.
MAX_PROCESSES = 1024
# A collective numbered past this (NCCL's SeqNum) ran in training: start-up, which broadcasts
# a model's parameters in 250 MB buckets, numbers fewer even for the largest models.
COLLECTIVES_AT_STARTUP = 1000
# A count an expectation names (--expect-workers N, --max-warnings N).
MAX_COUNT = 1 << 20

# Seconds one pattern may take on one line before it is given up.
PATTERN_TIMEOUT = 0.25
# Seconds a pattern that needs no keyword may take over one block of lines: a block holds many
# lines, but a pattern that runs away on it is given up all the same.
BLOCK_PATTERN_TIMEOUT = 4 * PATTERN_TIMEOUT
# A rule that ran away this often in one scan is not tried again in it.
MAX_RULE_TIMEOUTS = 3
# Seconds that runaway patterns may cost one scan (one scanning process) together: past it, every
# pattern has RUNAWAY_TIMEOUT_PAST_BUDGET on a line and a rule is given up at its first timeout,
# so fifty runaway rules cost about this, not fifty times MAX_RULE_TIMEOUTS timeouts.
RUNAWAY_BUDGET = 2.0
RUNAWAY_TIMEOUT_PAST_BUDGET = 0.05

# `logscan lint`: a launch script or training script is a page or two; one larger than this is
# not one, and one nested deeper than this (`$( $( ...`, `1+1+...`) is refused, not recursed into.
MAX_SCRIPT_BYTES = 1 << 20
MAX_SCRIPT_NESTING = 1000

# A sweep keeps, per job series, the templates of its latest MAX_HISTORY_RUNS healthy runs, at most
# MAX_RUN_TEMPLATES of each (its Workers' lines in log order), none longer than MAX_TEMPLATE_CHARS:
# a log can print anything, and the state stays a few KiB a run.
MAX_HISTORY_RUNS = 5
MAX_RUN_TEMPLATES = 600
MAX_TEMPLATE_CHARS = 400
