"""log-collision: One log file holds launch lines of several node_ranks, or env lines of ranks of
another node_rank: Workers wrote into the same log."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "log-collision"
FIRES_ON = [
    "log-collision",
    "healthy-shared-append",
]
QUIET_ON = [
    "healthy-2x2",
    # one Worker's four processes in its own file
    "healthy-tee-1x4",
    # two logs claim one node_rank, each in its own file
    "duplicate-node-rank",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
