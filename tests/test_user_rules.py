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
    ('kind = "signature"', 'kind = "regex"', "kind", "regex", "signature, code, signal, lint"),
    ('hint = "Do something."', 'hint = "Do something."\nrole = "leader"', "role", "leader",
     "launch-shape, failure, cascade, expectation"),
])
def test_an_unknown_word_is_one_line_naming_file_and_key(tmp_path, given, instead, field, value, known):
    path = tmp_path / "rule.toml"
    path.write_text(RULE.replace(given, instead).format(message='"boom"', pattern="'boom'", extra=""))
    with pytest.raises(RuleFileError) as error:
        load_catalogue([tmp_path])
    assert str(error.value) == f"{path}: field '{field}': must be one of {known}, not '{value}'"
