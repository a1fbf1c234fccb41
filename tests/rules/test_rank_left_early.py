"""rank-left-early: One rank left training early and exited 0; every other rank then lost its peers
in the next collective.

More of its cases, on inputs built from the samples' lines, are in tests/test_stragglers.py.
"""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "rank-left-early"
FIRES_ON = [
    "uneven-data",
    "uneven-data-rank1",
    "uneven-data-torch2.4",
]
QUIET_ON = [
    "healthy-2x2",
    # the rank that left raised: crash-during-training
    "crash-mid-training",
    # no rank left; one stopped taking part: collective-timeout
    "stall-mid-training",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
