"""masked-exit-code: The job was reported as succeeded, but the logs show the training failed or
never finished."""

from __future__ import annotations

from rule_spec import real_sample_tests

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


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
