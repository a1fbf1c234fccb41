"""expect-max-warnings: `--max-warnings N`: the diagnosis has at most N warning findings."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "expect-max-warnings"
FIRES_ON = [
    # its one warning is log-collision's; 0 is a limit, not "not asked for"
    ("log-collision", "--max-warnings", "0"),
]
QUIET_ON = [
    ("log-collision", "--max-warnings", "1"),
    # no warning at all
    ("healthy-timestamps", "--max-warnings", "0"),
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
