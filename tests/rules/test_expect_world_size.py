"""expect-world-size: `--expect-world-size W`: the launch lines add up to W processes and every
process printed WORLD_SIZE=W."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "expect-world-size"
FIRES_ON = [
    ("healthy-2x2", "--expect-world-size", "8"),
    ("missing-worker", "--expect-world-size", "4"),
]
QUIET_ON = [
    ("healthy-2x2", "--expect-world-size", "4"),
    # the job ended in a world of 4; its first round, of 2, re-formed when the late node joined
    ("elastic-late-node", "--expect-world-size", "4"),
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
