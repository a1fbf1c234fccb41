"""hang-before-first-batch: Training processes started but a rank stalled before the first batch
while the others waited for it."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "hang-before-first-batch"
FIRES_ON = [
    "hang-before-ddp",
    "hang-still-running",
]
QUIET_ON = [
    "healthy-2x2",
    # stuck in rendezvous: hang-in-rendezvous
    "missing-worker",
    # it stalled after the first batch: collective-timeout
    "stall-mid-training",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
