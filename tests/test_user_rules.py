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
