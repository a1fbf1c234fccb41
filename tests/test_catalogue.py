"""The rule catalogue: complete docs, code and data agree, and every pattern's own cases hold."""

from __future__ import annotations

import pytest

from logscan.catalogue import DOC_SECTIONS, load_catalogue
from logscan.checks import CHECKS
from logscan.failures import WAITING_SIGNALS

CATALOGUE = load_catalogue()
MATCHERS = [r for r in CATALOGUE.matchers]


def test_code_rules_and_checks_agree():
    code_ids = {r.id for r in CATALOGUE.rules.values() if r.kind == "code"}
    assert code_ids == set(CHECKS)


def test_signals_the_code_reads_exist():
    import logscan.checks.stages as stages

    read = {*WAITING_SIGNALS, *stages.RENDEZVOUS_SIGNALS, *stages.TERMINATED_SIGNALS,
            "collective-timeout-line", "worker-group-restart", "peer-lost"}
    assert read <= set(CATALOGUE.signals)
    assert set(stages.LAUNCH_FAILURE_RULES) <= set(CATALOGUE.rules)


@pytest.mark.parametrize("rule", [*CATALOGUE.rules.values(), *CATALOGUE.signals.values()], ids=lambda r: r.id)
def test_docs_are_complete(rule):
    for section in DOC_SECTIONS:
        assert rule.docs[section].strip(), section
    assert "\n" not in rule.summary.strip()
    if rule.kind != "signal":
        assert rule.hint.strip() and "\n" not in rule.hint.strip()


@pytest.mark.parametrize("rule", MATCHERS, ids=lambda r: r.id)
def test_pattern_cases(rule):
    assert len(rule.tests["fire"]) >= 1 and len(rule.tests["quiet"]) >= 1
    for line in rule.tests["fire"]:
        assert any(kw in line for kw in rule.keywords), f"no keyword in fire line: {line}"
        assert rule.match(line) is not None, f"should fire: {line}"
    for line in rule.tests["quiet"]:
        assert rule.match(line) is None, f"should stay quiet: {line}"


@pytest.mark.parametrize("rule", MATCHERS, ids=lambda r: r.id)
def test_docs_example_fires(rule):
    assert rule.match(rule.docs["example"].strip().splitlines()[-1]) is not None


def test_signature_messages_render_from_groups():
    for rule in CATALOGUE.rules.values():
        if rule.kind == "signature":
            for line in rule.tests["fire"]:
                message = rule.render_message(rule.match(line))
                assert message and "{" not in message, (rule.id, message)


VALID_RULE = """
id = "my-dataset-missing"
kind = "signature"
severity = "warning"
stage = "init"
summary = "Our dataset mount is missing."
message = "dataset {name} is not mounted"
hint = "Mount the dataset volume."
keywords = ["dataset"]
patterns = ['dataset (?P<name>\\w+) not mounted']
[docs]
what = "w"
why = "y"
example = "dataset imagenet not mounted"
fix = "f"
[tests]
fire = ["dataset imagenet not mounted"]
quiet = ["dataset imagenet mounted"]
"""


def test_malformed_rule_file_is_one_line_error_naming_file_and_field(run_cli, tmp_path):
    for broken, field in ((VALID_RULE.replace('"warning"', '"fatal"'), "severity"),
                          (VALID_RULE.replace("patterns = [", "patterns = ['(unclosed', "), "patterns"),
                          (VALID_RULE.replace('fix = "f"', ""), "docs.fix"),
                          ("id = [", "(syntax)")):
        (tmp_path / "bad.toml").write_text(broken)
        result = run_cli("rules", "--rules", tmp_path)
        assert result.exit_code == 2, result.output
        assert "bad.toml" in result.output and f"'{field}'" in result.output, result.output
        assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_user_rule_dir_adds_a_rule(run_cli, tmp_path):
    (tmp_path / "dataset.toml").write_text(VALID_RULE)
    result = run_cli("rules", "--rules", tmp_path)
    assert result.exit_code == 0, result.output
    assert "my-dataset-missing" in result.output
