"""restart-loop: torchrun restarted the worker group and the restarts failed again."""

from __future__ import annotations

from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests, sample_lines, write

RULE = "restart-loop"
FIRES_ON = [
    "restart-loop",
    "restart-not-recovered",
]
QUIET_ON = [
    "healthy-2x2",
    # a crash torchrun did not restart
    "import-error-one-rank",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_restart_loop_names_the_first_failure_of_a_rotated_log(tmp_path):
    # restart-loop worker-0 cut after its first restart into a rotated pair: the older piece
    # `launch_ddp.log.1` holds the first attempt's failure, the live `launch_ddp.log` the later
    # attempts. By name the live file sorts first; by age the first failure is in `.log.1`.
    lines = sample_lines("restart-loop", "worker-0")
    cut = next(i for i, l in enumerate(lines) if b"attempts left" in l) + 1
    older = write(tmp_path, "worker-0/launch_ddp.log.1", b"".join(lines[:cut]))
    write(tmp_path, "worker-0/launch_ddp.log", b"".join(lines[cut:]))
    write(tmp_path, "worker-1/launch_ddp.log", b"".join(sample_lines("restart-loop", "worker-1")))
    d = diagnose_paths([str(tmp_path)], Settings())
    loop = next(f for f in d.findings if f.rule == "restart-loop" and f.node_rank == 0)
    first = next(i for i, l in enumerate(lines) if b"RuntimeError: rank 0" in l) + 1
    assert (loop.evidence[0].file, loop.evidence[0].line) == (str(older), first)
    assert "first failure: RuntimeError: rank 0: could not open metrics writer" in loop.message
