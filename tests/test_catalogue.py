"""The rule catalogue: complete docs, code and data agree, and every pattern's own cases hold."""

from __future__ import annotations

import pytest

from logscan.catalogue import DOC_SECTIONS, load_catalogue
from logscan.findings import CODE_RULES
from logscan.scan.prefixes import strip_prefixes
from logscan import rule_ids

CATALOGUE = load_catalogue()
MATCHERS = [r for r in CATALOGUE.matchers]


def test_code_rules_and_checks_agree():
    """Every code rule's file has its function registered, and every registered function its file,
    under an id declared in logscan.rule_ids."""
    code_ids = {r.id for r in CATALOGUE.rules.values() if r.kind == "code"}
    assert not code_ids - set(CODE_RULES), f"code rules with no function in CODE_RULES: {sorted(code_ids - set(CODE_RULES))}"
    assert not set(CODE_RULES) - code_ids, f"CODE_RULES entries with no rule file: {sorted(set(CODE_RULES) - code_ids)}"
    declared = {value for name, value in vars(rule_ids).items() if name.isupper() and isinstance(value, str)}
    assert set(CODE_RULES) <= declared, sorted(set(CODE_RULES) - declared)


def test_every_code_rule_has_its_spec_file():
    """tests/rules/test_<id with underscores>.py for each code rule, as yamllint keeps one per
    rule (tests/rules/rule_spec.py says what one holds): it names its rule, at least one real
    sample the rule fires on and one it must stay quiet on, and tests both. No spec file
    outlives its rule."""
    import ast
    from pathlib import Path

    from conftest import SAMPLES

    specs = Path(__file__).parent / "rules"
    code_rules = {r.id for r in CATALOGUE.rules.values() if r.kind == "code"}
    assert code_rules
    for rule_id in sorted(code_rules):
        path = specs / f"test_{rule_id.replace('-', '_')}.py"
        assert path.is_file(), f"{rule_id} has no spec file tests/rules/{path.name}"
        tree = ast.parse(path.read_text())
        values = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                  for target in node.targets if isinstance(target, ast.Name)}
        assert ast.literal_eval(values["RULE"]) == rule_id, path.name
        for name in ("FIRES_ON", "QUIET_ON"):
            samples = {case if isinstance(case, str) else case[0]
                       for case in ast.literal_eval(values[name])}
            assert samples, f"{path.name}: {name} names no sample"
            assert all((SAMPLES / s / "expected.json").is_file() for s in samples), (path.name, samples)
        # each test defined in the file, or bound from rule_spec.real_sample_tests
        tests = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        tests |= {name.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
                  for name in (target.elts if isinstance(target, ast.Tuple) else [target])
                  if isinstance(name, ast.Name)}
        assert {"test_fires_on_real_samples", "test_quiet_on_real_samples"} <= tests, path.name
    named = {p.stem.removeprefix("test_").replace("_", "-") for p in specs.glob("test_*.py")}
    assert named <= code_rules, f"spec files of no code rule: {sorted(named - code_rules)}"


def test_ids_the_code_names_exist():
    named = {value for name, value in vars(rule_ids).items() if name.isupper() and isinstance(value, str)}
    named |= {v for name, value in vars(rule_ids).items() if isinstance(value, tuple) for v in value}
    assert named, "rule_ids names no id"
    assert named <= set(CATALOGUE.rules) | set(CATALOGUE.signals)


def test_no_rule_id_literal_outside_the_ids_module():
    """Rule knowledge is data: code names an id only through logscan.rule_ids."""
    import re
    from pathlib import Path

    package = Path(rule_ids.__file__).parent
    ids = set(CATALOGUE.rules) | set(CATALOGUE.signals)
    for path in package.rglob("*.py"):
        if path.name == "rule_ids.py":
            continue
        for literal in re.findall(r'"([a-z0-9-]+)"', path.read_text()):
            assert literal not in ids, f"{path.name} names {literal!r}: use logscan.rule_ids"


def test_every_builtin_rule_declares_its_role_and_precedence():
    import tomllib

    from logscan.catalogue import builtin_rules_dir

    for path in builtin_rules_dir().rglob("*.toml"):
        data = tomllib.loads(path.read_text())
        if data["kind"] not in ("signal", "harmless"):  # a role ranks findings: rules only
            assert "role" in data and "precedence" in data, path.name
        if data.get("cause"):
            assert "precedence" in data, path.name


def test_cause_order_comes_from_the_signals():
    by_cause = {s.cause: s.precedence for s in CATALOGUE.signals.values() if s.cause}
    assert list(CATALOGUE.cause_order) == sorted(by_cause, key=by_cause.get)
    # A collate frame explains a ValueError better than anything else in its traceback.
    assert CATALOGUE.cause_order.index("collator") < CATALOGUE.cause_order.index("data-path")


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
    # A scan matches a line's text after its prefixes (timestamps, logging headers, [rankN]:)
    # are stripped: a pattern that needs a prefix would never fire there.
    for line in rule.tests["fire"]:
        assert any(kw in line for kw in rule.keywords), f"no keyword in fire line: {line}"
        assert rule.match(strip_prefixes(line).body) is not None, f"should fire: {line}"
    for line in rule.tests["quiet"]:
        assert rule.match(strip_prefixes(line).body) is None, f"should stay quiet: {line}"


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


def test_the_rules_page_is_generated_from_the_catalogue():
    """docs/rules.md is what tools/rules_doc.py makes of the catalogue: every rule once, with its
    severity; a rule added or reworded without regenerating the page fails here."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(repo / "tools" / "rules_doc.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    page = (repo / "docs" / "rules.md").read_text()
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| (error|warning|info) \|", page, re.M)
    assert sorted(rows) == sorted((r.id, r.severity) for r in CATALOGUE.rules.values())


def test_a_misspelt_group_is_one_line_error_naming_the_file(run_cli, tmp_path):
    misspelt = VALID_RULE.replace("(?P<name>\\w+)", "(?P<name>\\w+) on (?P<peer_rnak>\\d+)")
    (tmp_path / "bad.toml").write_text(misspelt)
    result = run_cli("rules", "--rules", tmp_path)
    assert result.exit_code == 2, result.output
    assert "bad.toml" in result.output and "'peer_rnak'" in result.output and "'peer_rank'" in result.output
    assert result.output.count("\n") == 1


def test_a_message_naming_a_group_no_pattern_defines_is_refused(run_cli, tmp_path):
    (tmp_path / "bad.toml").write_text(VALID_RULE.replace("dataset {name}", "dataset {nmae}"))
    result = run_cli("rules", "--rules", tmp_path)
    assert result.exit_code == 2 and "bad.toml" in result.output and "{nmae}" in result.output, result.output


def test_a_rule_whose_patterns_lack_a_group_its_code_reads_is_refused(tmp_path):
    from logscan.catalogue import builtin_rules_dir, load_rule_file
    from logscan.errors import RuleFileError

    source = (builtin_rules_dir() / "signals" / "worker-group-restart.toml").read_text()
    assert "(?P<count>" in source
    (tmp_path / "worker-group-restart.toml").write_text(source.replace("(?P<count>", "(?P<restarts>"))
    with pytest.raises(RuleFileError) as caught:
        load_rule_file(tmp_path / "worker-group-restart.toml")
    assert "worker-group-restart.toml" in str(caught.value) and "'count'" in str(caught.value)


def test_every_expectation_has_its_rule_and_its_check():
    from logscan.expectations import EXPECTATIONS, Expectations
    from logscan.vocabulary import Role

    assert {e.rule for e in EXPECTATIONS} == {r.id for r in CATALOGUE.with_role(Role.EXPECTATION)}
    assert all(e.rule in CODE_RULES for e in EXPECTATIONS)
    assert not Expectations().any
