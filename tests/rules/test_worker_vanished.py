"""worker-vanished: A Worker's log stops without an error or an exit report while the other Workers
lost their peers: it was killed from outside."""

from __future__ import annotations

from rule_spec import real_sample_tests

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


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
