"""hang-in-rendezvous: A Worker's torchrun waited for the other nodes and never got past
rendezvous."""

from __future__ import annotations

from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests, sample_lines, write

RULE = "hang-in-rendezvous"
FIRES_ON = [
    "missing-worker",
    "missing-worker-torch1.13",
    "missing-worker-torch2.1",
    "port-in-use",
    "launch-mismatch",
    "duplicate-node-rank",
    "duplicate-node-rank-zero",
    "launch-env-missing",
    # both nodes wait in the round that re-formed the world: node 0 had trained in the one before
    "elastic-late-node-reform-timeout",
]
QUIET_ON = [
    "healthy-2x2",
    # its ranks started, so rendezvous was over: hang-before-first-batch
    "hang-before-ddp",
    # the re-formed round started its processes
    "elastic-late-node",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_a_launch_script_without_a_shape_line_still_gets_stage_rules(tmp_path):
    # missing-worker sample with the DDP launch lines removed: torchrun's own rendezvous timeout
    # must still place both Workers in rendezvous.
    for worker in ("worker-0", "worker-1"):
        kept = [l for l in sample_lines("missing-worker", worker) if b"DDP launch:" not in l]
        write(tmp_path, f"{worker}.log", b"".join(kept))
    d = diagnose_paths([str(tmp_path)], Settings())
    rules = {f.rule for f in d.findings}
    assert "hang-in-rendezvous" in rules and not d.healthy

