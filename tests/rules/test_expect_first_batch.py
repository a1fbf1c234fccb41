"""expect-first-batch: `--expect-first-batch`: every Worker (and so every rank) got past its first
batch."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

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


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
