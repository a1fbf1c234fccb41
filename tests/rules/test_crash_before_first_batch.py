"""crash-before-first-batch: A training process raised an exception before the first batch; the
cause is classified from its traceback."""

from __future__ import annotations

from logscan.diagnose.pipeline import diagnose_paths
from logscan.settings import Settings
from rule_spec import real_sample_tests, sample_lines, write

RULE = "crash-before-first-batch"
FIRES_ON = [
    "collate-error",
    "config-print-crash",
    "env-var-keyerror",
    "import-error-one-rank",
    "import-error-one-rank-torch1.13",
    "import-error-one-rank-torch2.1",
    "local-rank-argparse",
    "missing-data-all-ranks",
    "masked-pipe-tee",
    "restart-loop",
    "world-size-leak",
]
QUIET_ON = [
    "healthy-2x2",
    # it raised after training had started: crash-during-training
    "crash-mid-training",
    # it stalled before the first batch and raised nothing
    "hang-before-ddp",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_an_exception_the_training_survived_is_not_a_crash(tmp_path):
    # healthy-2x2 worker-0 with a handled, logged exception inserted before its progress lines.
    lines = sample_lines("healthy-2x2", "worker-0")
    at = next(i for i, l in enumerate(lines) if l.startswith(b"step "))
    lines[at:at] = [b"Traceback (most recent call last):\n",
                    b'  File "train.py", line 10, in fetch\n',
                    b"ConnectionResetError: [Errno 104] Connection reset by peer\n",
                    b"retrying download of tokenizer files\n"]
    write(tmp_path, "worker-0/launch_ddp.log", b"".join(lines))
    write(tmp_path, "worker-1/launch_ddp.log", b"".join(sample_lines("healthy-2x2", "worker-1")))
    d = diagnose_paths([str(tmp_path)], Settings())
    assert d.healthy, [f.message for f in d.findings]
