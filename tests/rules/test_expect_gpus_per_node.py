"""expect-gpus-per-node: `--expect-gpus-per-node G`: every Worker's launch line says
gpus_per_node=G."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "expect-gpus-per-node"
FIRES_ON = [
    ("healthy-2x2", "--expect-gpus-per-node", "4"),
]
QUIET_ON = [
    ("healthy-2x2", "--expect-gpus-per-node", "2"),
    # the Workers present all say 2
    ("missing-worker", "--expect-gpus-per-node", "2"),
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
