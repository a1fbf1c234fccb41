"""hang-ended-from-outside: One rank stalled and the platform ended the job before any timeout: the
straggler is the rank whose last line differs from its peers' or is far older than theirs.

More of its cases, on inputs built from the samples' lines, are in tests/test_stragglers.py.
"""

from __future__ import annotations

import pytest

from rule_spec import diagnosed, real_sample_tests

RULE = "hang-ended-from-outside"
FIRES_ON = [
    "file-lock-wait",
    "platform-walltime-stall",
    "walltime-stall-torchrun-signalled",
    # production shape, no straggler's line: the silence before the stop against the job's rhythm
    "stall-silent-sigterm-prod",
    "hang-before-first-batch-sigterm-prod",
    "platform-walltime-stall-prod",
]
QUIET_ON = [
    "healthy-2x2",
    # a collective timed out before anyone ended the job: collective-timeout
    "stall-mid-training",
    # stopped while every rank still made progress: stopped-from-outside
    "sighup-from-outside",
    "sigterm-every-torchrun-prod",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


@pytest.mark.parametrize("sample, root", [
    # steps 0.8 s apart (logged every fifth), then 40 s of nothing before every torchrun's SIGTERM
    ("stall-silent-sigterm-prod", RULE),
    # nothing from any process in the 42 s between torchrun's start-up and the SIGTERM
    ("hang-before-first-batch-sigterm-prod", RULE),
    # SIGTERM while the steps still came: the stop is the story
    ("sigterm-every-torchrun-prod", "stopped-from-outside"),
])
def test_the_ending_is_not_the_cause(sample, root):
    """A stop from outside long after the last sign of work ended a stall: the stall is the root and
    the stop only its ending; a stop that lands while steps come is the root itself."""
    got = diagnosed(sample)
    assert got.root_cause.rule == root, got.verdict_reason
