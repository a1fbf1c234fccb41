"""hang-before-first-batch: Training processes started but a rank stalled before the first batch
while the others waited for it."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

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


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
