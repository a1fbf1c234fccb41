"""expect-max-warnings: `--max-warnings N`: the diagnosis has at most N warning findings."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "expect-max-warnings"
FIRES_ON = [
    # its one warning is log-collision's; 0 is a limit, not "not asked for"
    ("log-collision", "--max-warnings", "0"),
]
QUIET_ON = [
    ("log-collision", "--max-warnings", "1"),
    # no warning at all
    ("healthy-timestamps", "--max-warnings", "0"),
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
