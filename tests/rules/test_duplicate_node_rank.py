"""duplicate-node-rank: Two nodes claim the same node_rank: in two Worker logs, or both in one log."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "duplicate-node-rank"
FIRES_ON = [
    "duplicate-node-rank",
    "duplicate-node-rank-zero",
]
QUIET_ON = [
    "healthy-2x2",
    # a node_rank is missing, none is claimed twice
    "missing-worker",
    # two Workers wrote one file: log-collision
    "log-collision",
    # Worker 1's log shows its restarts only as its ranks' env prints again, errors between
    "restart-loop",
    # both Workers append to one log, their env prints interleaved: each rank once, the world whole
    "healthy-shared-append",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
