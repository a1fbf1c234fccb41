"""restart-recovered: torchrun restarted the worker group after a failure, and the restarted
attempt went on without failing."""

from __future__ import annotations

from rule_spec import real_sample_tests

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


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
