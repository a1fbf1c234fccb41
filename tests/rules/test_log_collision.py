"""log-collision: One log file holds launch lines of several node_ranks, or env lines of ranks of
another node_rank: Workers wrote into the same log."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "log-collision"
FIRES_ON = [
    "log-collision",
    "healthy-shared-append",
]
QUIET_ON = [
    "healthy-2x2",
    # one Worker's four processes in its own file
    "healthy-tee-1x4",
    # two logs claim one node_rank, each in its own file
    "duplicate-node-rank",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
