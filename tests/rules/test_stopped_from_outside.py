"""stopped-from-outside: torchrun received a signal from outside (SIGHUP, SIGINT, SIGTERM, ...)
before anything in the job failed by itself: the job was stopped, not broken."""

from __future__ import annotations

from rule_spec import real_sample_tests

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


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
