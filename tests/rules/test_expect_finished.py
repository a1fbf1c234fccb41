"""expect-finished: `--expect-finished`: the run ended normally (a last progress line at its total,
or an end-of-run line)."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "expect-finished"
FIRES_ON = [
    ("stall-mid-training", "--expect-finished"),
]
QUIET_ON = [
    ("healthy-timestamps", "--expect-finished"),
    ("healthy-2x2", "--expect-finished"),
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
