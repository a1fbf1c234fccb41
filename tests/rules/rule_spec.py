"""What a code rule's spec file states of its rule, and the diagnoses it reads.

Each code rule (rules/<id>.toml, kind = "code") has one spec file, tests/rules/test_<id>.py with
underscores, as yamllint keeps one per rule. It names the rule (RULE), the real samples it must
fire on (FIRES_ON) and those it must stay quiet on (QUIET_ON), each a sample name or, for an
expectation, a sample with the `logscan check` flags that ask for it; its tests
test_fires_on_real_samples and test_quiet_on_real_samples read them; the rule's own edge cases,
on inputs built from real lines where no sample shows them, follow in the same file.
tests/test_catalogue.py checks that every code rule has its spec file.
"""

from __future__ import annotations

import json
from functools import cache

from conftest import POST_MORTEM_NOW, SAMPLES


@cache
def diagnosed(sample: str):
    """The diagnosis of a real sample, as `cd sample_logs && logscan scan SAMPLE` gives it."""
    from test_samples import diagnose

    return diagnose(SAMPLES / sample)


@cache
def checked(sample: str, *flags: str) -> dict:
    """The JSON report of `logscan check SAMPLE FLAGS...` (the expectations a gate asks for)."""
    from typer.testing import CliRunner

    from logscan.cli import app

    result = CliRunner().invoke(app, ["check", str(SAMPLES / sample), *flags, "--now",
                                      POST_MORTEM_NOW, "--isolated", "--format", "json"])
    assert result.stdout.startswith("{"), result.output  # a report, not a usage error
    return json.loads(result.stdout)


def rules_fired(case: str | tuple[str, ...]) -> set[str]:
    """The rules of a spec case's findings: a sample, or a sample and its check flags."""
    if isinstance(case, str):
        return {f.rule for f in diagnosed(case).findings}
    sample, *flags = case
    return {f["rule"] for f in checked(sample, *flags)["findings"]}


def sample_lines(sample: str, worker: str) -> list[bytes]:
    """A real Worker log's lines, to build an edge case from."""
    return (SAMPLES / sample / worker / "launch_ddp.log").read_bytes().splitlines(keepends=True)


def write(root, name: str, data: bytes):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def case_id(case: str | tuple[str, ...]) -> str:
    return case if isinstance(case, str) else " ".join(case)


def real_sample_tests(rule: str, fires_on: list, quiet_on: list):
    """A spec file's two tests of its rule on the real samples it names: it fires on each of
    `fires_on` and stays quiet on each of `quiet_on`. A spec file binds them to its module:
    `test_fires_on_real_samples, test_quiet_on_real_samples = real_sample_tests(RULE, FIRES_ON, QUIET_ON)`."""
    import pytest

    @pytest.mark.parametrize("case", fires_on, ids=case_id)
    def test_fires_on_real_samples(case):
        assert rule in rules_fired(case)

    @pytest.mark.parametrize("case", quiet_on, ids=case_id)
    def test_quiet_on_real_samples(case):
        assert rule not in rules_fired(case)

    return test_fires_on_real_samples, test_quiet_on_real_samples
