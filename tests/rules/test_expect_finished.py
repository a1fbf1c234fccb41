"""expect-finished: `--expect-finished`: the run ended normally (a last progress line at its total,
or an end-of-run line)."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "expect-finished"
FIRES_ON = [
    ("stall-mid-training", "--expect-finished"),
]
QUIET_ON = [
    ("healthy-timestamps", "--expect-finished"),
    ("healthy-2x2", "--expect-finished"),
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
