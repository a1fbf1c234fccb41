"""gpu-count-mismatch: gpus_per_node differs between Workers, so torchrun forms a world that
matches no launch line."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "gpu-count-mismatch"
FIRES_ON = [
    "gpu-count-mismatch",
]
QUIET_ON = [
    "healthy-2x2",
    # one Worker: no other to disagree with
    "healthy-tee-1x4",
    # a wrong WORLD_SIZE; the Workers' GPU counts agree
    "world-size-leak",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
