"""masked-exit-code: The job was reported as succeeded, but the logs show the training failed or
never finished."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "masked-exit-code"
FIRES_ON = [
    "masked-plain-tee",
    "masked-pipe-tee",
    "masked-upload-sleep",
]
QUIET_ON = [
    "healthy-2x2",
    # the platform says failed: nothing was masked
    "crash-mid-training",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
