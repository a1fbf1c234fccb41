"""missing-rank: On a Worker whose torchrun started processes, a local rank never printed its
`torchrun env:` line."""

from __future__ import annotations

from rule_spec import real_sample_tests, rules_fired

RULE = "missing-rank"
FIRES_ON = [
    "import-error-one-rank",
    "import-error-one-rank-torch1.13",
    "import-error-one-rank-torch2.1",
]
QUIET_ON = [
    "healthy-2x2",
    # a whole Worker is missing: missing-worker
    "missing-worker",
    # every rank printed its env line before one raised
    "crash-mid-training",
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_the_same_local_ranks_shown_on_every_worker_is_a_filter_not_missing_ranks(tmp_path):
    """torchrun --local-ranks-filter 0 shows one local rank's output per node: derived from the
    real import-error-one-rank sample (rank 3 died before its print), keeping only local rank 0's
    env prints on both Workers. Every Worker alike is the filter's mark, so no rank is missing; the
    real sample, where only node 1 lacks a print, still finds rank 3."""
    import re
    import shutil

    from conftest import POST_MORTEM_NOW, SAMPLES
    from logscan.config import parse_time
    from logscan.diagnose.pipeline import diagnose_paths
    from logscan.settings import Settings

    job = tmp_path / "job"
    shutil.copytree(SAMPLES / "import-error-one-rank", job, ignore=shutil.ignore_patterns("expected.json"))
    for log in job.rglob("launch_ddp.log"):
        text = log.read_text()
        log.write_text(re.sub(r"torchrun env: RANK= \d+ LOCAL_RANK= 1 WORLD_SIZE= \d+\n", "", text))
    got = diagnose_paths([str(job)], Settings(now=parse_time(POST_MORTEM_NOW)))
    assert RULE not in {f.rule for f in got.findings}
    assert RULE in rules_fired("import-error-one-rank")
