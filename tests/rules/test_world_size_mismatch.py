"""world-size-mismatch: A training process's WORLD_SIZE, RANK or LOCAL_RANK does not fit its
Worker's launch line."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "world-size-mismatch"
FIRES_ON = [
    "gpu-count-mismatch",
    "world-size-leak",
]
QUIET_ON = [
    "healthy-2x2",
    # the launch lines disagree with each other; every WORLD_SIZE fits its own
    "launch-mismatch",
    # node 0's first round, a world of 2 before the late node joined, is elastic, not a leak
    "elastic-late-node",
    "elastic-late-node-torch2.4",
    "elastic-late-node-reform-timeout",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
