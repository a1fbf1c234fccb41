"""stopped-from-outside: torchrun received a signal from outside (SIGHUP, SIGINT, SIGTERM, ...)
before anything in the job failed by itself: the job was stopped, not broken."""

from __future__ import annotations

import pytest

from rule_spec import case_id, rules_fired

RULE = "stopped-from-outside"
FIRES_ON = [
    "sighup-from-outside",
    "sighup-from-outside-torch2.4",
    "sigint-from-outside",
    "sigterm-every-torchrun-prod",
]
QUIET_ON = [
    "healthy-2x2",
    # a process of the job killed itself: worker-killed
    "self-sigkill",
    # a rank raised first; the SIGTERMs that followed are torchrun's own
    "crash-mid-training",
]


@pytest.mark.parametrize("case", FIRES_ON, ids=case_id)
def test_fires_on_real_samples(case):
    assert RULE in rules_fired(case)


@pytest.mark.parametrize("case", QUIET_ON, ids=case_id)
def test_quiet_on_real_samples(case):
    assert RULE not in rules_fired(case)
