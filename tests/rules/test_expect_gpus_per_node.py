"""expect-gpus-per-node: `--expect-gpus-per-node G`: every Worker's launch line says
gpus_per_node=G."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "expect-gpus-per-node"
FIRES_ON = [
    ("healthy-2x2", "--expect-gpus-per-node", "4"),
]
QUIET_ON = [
    ("healthy-2x2", "--expect-gpus-per-node", "2"),
    # the Workers present all say 2
    ("missing-worker", "--expect-gpus-per-node", "2"),
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)
