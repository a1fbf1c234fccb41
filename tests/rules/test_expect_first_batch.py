"""expect-first-batch: `--expect-first-batch`: every Worker (and so every rank) got past its first
batch."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "expect-first-batch"
FIRES_ON = [
    ("hang-before-ddp", "--expect-first-batch"),
    ("missing-worker", "--expect-first-batch"),
]
QUIET_ON = [
    ("healthy-2x2", "--expect-first-batch"),
    # it stalled after the first batch
    ("stall-mid-training", "--expect-first-batch"),
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
