"""hang-ended-from-outside: One rank stalled and the platform ended the job before any timeout: the
straggler is the rank whose last line differs from its peers' or is far older than theirs.

More of its cases, on inputs built from the samples' lines, are in tests/test_stragglers.py.
"""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "hang-ended-from-outside"
FIRES_ON = [
    "file-lock-wait",
    "platform-walltime-stall",
    "walltime-stall-torchrun-signalled",
]
QUIET_ON = [
    "healthy-2x2",
    # a collective timed out before anyone ended the job: collective-timeout
    "stall-mid-training",
    # stopped while every rank still made progress: stopped-from-outside
    "sighup-from-outside",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
