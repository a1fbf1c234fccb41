"""expect-workers: `--expect-workers N`: the logs show exactly N Workers, and the launch lines say
nnodes=N."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "expect-workers"
FIRES_ON = [
    ("healthy-2x2", "--expect-workers", "3"),
    ("missing-worker", "--expect-workers", "2"),
]
QUIET_ON = [
    ("healthy-2x2", "--expect-workers", "2"),
    # not asked for, an expectation never fires
    "healthy-2x2",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
