"""missing-rank: On a Worker whose torchrun started processes, a local rank never printed its
`torchrun env:` line."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "missing-rank"
FIRES_ON = [
    "import-error-one-rank",
    "import-error-one-rank-torch1.13",
    "import-error-one-rank-torch2.1",
]
QUIET_ON = [
    "healthy-2x2",
    # a whole Worker is missing: missing-worker
    "missing-worker",
    # every rank printed its env line before one raised
    "crash-mid-training",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
