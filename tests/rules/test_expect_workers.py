"""expect-workers: `--expect-workers N`: the logs show exactly N Workers, and the launch lines say
nnodes=N."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

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


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
