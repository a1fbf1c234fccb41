"""restart-recovered: torchrun restarted the worker group after a failure, and the restarted
attempt went on without failing."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "restart-recovered"
FIRES_ON = [
    "restart-recovered",
    "restart-recovered-torch2.4",
]
QUIET_ON = [
    "healthy-2x2",
    # the restarted attempts failed again: restart-loop
    "restart-loop",
    # the restarted attempt failed too
    "restart-not-recovered",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
