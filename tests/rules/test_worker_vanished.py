"""worker-vanished: A Worker's log stops without an error or an exit report while the other Workers
lost their peers: it was killed from outside."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "worker-vanished"
FIRES_ON = [
    "rdzv-c10d-master-lost",
]
QUIET_ON = [
    "healthy-2x2",
    # a Worker that never started: missing-worker
    "missing-worker",
    # the Worker's own log says it was killed: worker-killed
    "self-sigkill",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
