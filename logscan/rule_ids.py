"""The rule and signal ids that code names. Everything else about a rule (its role, precedence,
cause class, whether its line means a cascade) is data in its catalogue file; a test checks that
each id here is in the catalogue."""

from __future__ import annotations

# Rules whose findings other code reads.
MISSING_WORKER = "missing-worker"
MISSING_WORKER_LOG = "missing-worker-log"  # a collection gap: the Worker ran, its log is not here
MISSING_RANK = "missing-rank"

# Signals that code rules read for what they mean in particular.
COLLECTIVE_TIMEOUT_LINE = "collective-timeout-line"
DEATH_SIGNAL_RECEIVED = "death-signal-received"
SIBLING_TERMINATED = "sibling-terminated"
STORE_TIMEOUT = "store-timeout"
CONNECT_FAILED = "connect-failed"
PEER_LOST = "peer-lost"
WORKER_GROUP_RESTART = "worker-group-restart"
ERROR_LINE = "error-line"

# What a process waiting on others reports: evidence that it was waiting, not failing.
WAITING_EVIDENCE = (COLLECTIVE_TIMEOUT_LINE, DEATH_SIGNAL_RECEIVED, STORE_TIMEOUT, CONNECT_FAILED, PEER_LOST)

# Findings that leave processes or Workers waiting: the report shows where each one stopped.
HANG_IN_RENDEZVOUS = "hang-in-rendezvous"
HANG_RULES = (HANG_IN_RENDEZVOUS, "hang-before-first-batch", "collective-timeout")
# torchrun's start-up banner: a Worker's "torchrun started" timeline mark.
TORCHRUN_STARTED = "torchrun-started"
