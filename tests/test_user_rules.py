"""A user's rule file (--rules DIR) is data: whatever it holds, loading it gives a rule or one line
naming the file and the field, never a traceback, an attribute walk or gigabytes of memory.
The rule files here are written for the tests."""

from __future__ import annotations

import pytest

from logscan.catalogue import load_catalogue
from logscan.errors import RuleFileError

RULE = '''id = "my-rule"
kind = "signature"
severity = "error"
stage = "training"
summary = "A user's rule."
message = {message}
hint = "Do something."
keywords = ["boom"]
patterns = [{pattern}]
{extra}
[docs]
what = "w"
why = "w"
example = "boom now"
fix = "f"
'''


def _load(tmp_path, message='"boom: {detail}"', pattern="'boom (?P<detail>.*)'", extra=""):
    (tmp_path / "rule.toml").write_text(RULE.format(message=message, pattern=pattern, extra=extra))
    return load_catalogue([tmp_path]).rules["my-rule"]


def test_a_template_substitutes_named_groups_only(tmp_path):
    rule = _load(tmp_path)
    assert rule.render_message(rule.match("boom now")) == "boom: now"
    assert rule.render_message({}) == "boom: ?"


@pytest.mark.parametrize("message", [
    '"{detail.__class__.__mro__[1].__doc__}"', '"{detail[0]}"', '"{detail!r}"', '"{detail:>99999}"',
    '"{0}"', '"{"'])
def test_a_template_that_is_more_than_names_is_refused(tmp_path, message):
    with pytest.raises(RuleFileError, match="message"):
        _load(tmp_path, message=message)


@pytest.mark.parametrize("pattern, why", [
    ("'a{4294967294}'", "counted repeat"),
    ("'x{2,99999}'", "counted repeat"),
    ("'" + "(" * 60 + "a" + ")" * 60 + "'", "nested"),
    ("'" + "a" * 5000 + "'", "longer than"),
    ("'(unclosed'", "bad pattern"),
])
def test_a_costly_or_broken_pattern_is_one_line(tmp_path, pattern, why):
    with pytest.raises(RuleFileError, match=why) as error:
        _load(tmp_path, pattern=pattern)
    assert "\n" not in str(error.value) and "rule.toml" in str(error.value)


def test_a_huge_file_is_not_read_whole(tmp_path):
    (tmp_path / "rule.toml").write_bytes(b"# " + b"x" * (2 << 20))
    with pytest.raises(RuleFileError, match="larger than"):
        load_catalogue([tmp_path])


def test_signal_fields_are_typed(tmp_path):
    with pytest.raises(RuleFileError, match="cause"):
        _load(tmp_path, extra='cause = ["a", "b"]')


def test_the_catalogue_words_load_as_the_vocabulary():
    from logscan.vocabulary import Role, RuleKind, RunStage, Severity

    catalogue = load_catalogue()
    for rule in (*catalogue.rules.values(), *catalogue.signals.values()):
        assert (type(rule.kind), type(rule.severity), type(rule.role), type(rule.stage)) == \
            (RuleKind, Severity, Role, RunStage)
        assert rule.traceback_stage is None or type(rule.traceback_stage) is RunStage


@pytest.mark.parametrize("given, instead, field, value, known", [
    ('severity = "error"', 'severity = "fatal"', "severity", "fatal", "error, warning, info"),
    ('stage = "training"', 'stage = "backward"', "stage", "backward",
     "launch, rendezvous, init, training, exit"),
    ('kind = "signature"', 'kind = "regex"', "kind", "regex", "signature, code, signal, lint, harmless"),
    ('hint = "Do something."', 'hint = "Do something."\nrole = "leader"', "role", "leader",
     "launch-shape, failure, cascade, expectation"),
])
def test_an_unknown_word_is_one_line_naming_file_and_key(tmp_path, given, instead, field, value, known):
    path = tmp_path / "rule.toml"
    path.write_text(RULE.replace(given, instead).format(message='"boom"', pattern="'boom'", extra=""))
    with pytest.raises(RuleFileError) as error:
        load_catalogue([tmp_path])
    assert str(error.value) == f"{path}: field '{field}': must be one of {known}, not '{value}'"


@pytest.mark.parametrize("line, after, field, meant", [
    ("exlcude = ['boom now']", "patterns = ", "exlcude", "exclude"),
    ('severty = "warning"', "patterns = ", "severty", "severity"),
    ("[tests]\nfier = ['boom now']", "fix = ", "tests.fier", "fire"),
    ("[docs.more]\nnote = 'n'", "fix = ", "docs.more", None),
])
def test_a_misspelt_key_is_one_line_naming_the_file_and_key(tmp_path, line, after, field, meant):
    lines = RULE.format(message='"boom"', pattern="'boom'", extra="").splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith(after)) + 1
    (tmp_path / "rule.toml").write_text("\n".join(lines[:at] + [line] + lines[at:]) + "\n")
    with pytest.raises(RuleFileError) as error:
        load_catalogue([tmp_path])
    message = str(error.value)
    assert "rule.toml" in message and f"field '{field}'" in message and "\n" not in message
    if meant is not None:
        assert f"did you mean {meant!r}" in message, message


def test_a_misspelt_exclusion_stops_the_scan_rather_than_being_dropped(run_cli, tmp_path):
    """Spelt right, the exclusion keeps the rule quiet on the sample; misspelt, the rule used
    to load without it and fire. The sample is REAL: sample_logs/healthy-2x2."""
    from conftest import SAMPLES

    rule = RULE.format(message='"step {detail}"', pattern="'^step (?P<detail>\\d+)/30'",
                       extra="EXCLUSION = ['loss']").replace('keywords = ["boom"]',
                                                             'keywords = ["step"]')
    (tmp_path / "rule.toml").write_text(rule.replace("EXCLUSION", "exclude"))
    healthy = SAMPLES / "healthy-2x2"
    spelt_right = run_cli("scan", healthy, "--rules", tmp_path, "--format", "json")
    assert spelt_right.exit_code == 0 and '"my-rule"' not in spelt_right.output
    (tmp_path / "rule.toml").write_text(rule.replace("EXCLUSION", "exlcude"))
    misspelt = run_cli("scan", healthy, "--rules", tmp_path)
    assert misspelt.exit_code == 2, misspelt.output
    assert misspelt.output.count("\n") == 1 and "rule.toml" in misspelt.output
    assert "field 'exlcude'" in misspelt.output and "did you mean 'exclude'" in misspelt.output


@pytest.mark.parametrize("kind, field", [("code", "patterns"), ("signal", "severity")])
def test_a_field_of_another_kind_of_rule_is_named(tmp_path, kind, field):
    text = RULE.format(message='"boom"', pattern="'boom'", extra="")
    text = text.replace('kind = "signature"', f'kind = "{kind}"')
    if kind == "code":
        text = text.replace('message = "boom"\n', "").replace('keywords = ["boom"]\n', "")
    else:
        text = text.replace('message = "boom"\n', "")
    (tmp_path / "rule.toml").write_text(text)
    with pytest.raises(RuleFileError, match=f"field '{field}': is not a field of a {kind} rule"):
        load_catalogue([tmp_path])
