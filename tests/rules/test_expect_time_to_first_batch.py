"""expect-time-to-first-batch: `--max-time-to-first-batch DURATION`: each Worker's first progress
line comes within DURATION of its launch line."""

from __future__ import annotations

from rule_spec import real_sample_tests

RULE = "expect-time-to-first-batch"
FIRES_ON = [
    ("healthy-timestamps", "--max-time-to-first-batch", "1s"),
]
QUIET_ON = [
    ("healthy-timestamps", "--max-time-to-first-batch", "10m"),
]


test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)


def test_without_timestamps_the_limit_is_not_checked_and_it_says_why():
    from rule_spec import checked

    report = checked("healthy-2x2", "--max-time-to-first-batch", "10m")
    assert RULE not in {f["rule"] for f in report["findings"]}
    (result,) = report["expectations"]
    assert result["status"] == "not checked" and "timestamped" in result["why"], result
