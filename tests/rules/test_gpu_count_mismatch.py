"""gpu-count-mismatch: gpus_per_node differs between Workers, so torchrun forms a world that
matches no launch line."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "gpu-count-mismatch"
FIRES_ON = [
    "gpu-count-mismatch",
]
QUIET_ON = [
    "healthy-2x2",
    # one Worker: no other to disagree with
    "healthy-tee-1x4",
    # a wrong WORLD_SIZE; the Workers' GPU counts agree
    "world-size-leak",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
