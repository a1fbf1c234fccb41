"""world-size-mismatch: A training process's WORLD_SIZE, RANK or LOCAL_RANK does not fit its
Worker's launch line."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "world-size-mismatch"
FIRES_ON = [
    "gpu-count-mismatch",
    "world-size-leak",
]
QUIET_ON = [
    "healthy-2x2",
    # the launch lines disagree with each other; every WORLD_SIZE fits its own
    "launch-mismatch",
    # node 0's first round, a world of 2 before the late node joined, is elastic, not a leak
    "elastic-late-node",
    "elastic-late-node-torch2.4",
    "elastic-late-node-reform-timeout",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
