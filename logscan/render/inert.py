"""Untrusted log text made inert: shown, never acted on by a terminal or a CI runner.

Control characters (C0 but tab, DEL, C1) and bidirectional overrides become visible escapes, so
an ESC from a log cannot clear a screen, write the clipboard (OSC 52) or forge a link (OSC 8).
Lone surrogates (bytes of a file name that are not UTF-8) become `\\xNN`, so writing them can
never fail. Rich markup needs no escaping here because log text only ever reaches rich as plain
`Text`. A CI runner reads a line that starts with `::` (after blanks) as a workflow command
(`::add-mask::`, `::error::`), and GitHub's runner still reads its legacy form `##[command]`
anywhere in a line (`##[error]`, `##[stop-commands]`); `no_workflow_commands` defuses both in a
whole report (`no_legacy_commands_in_data` in a JSON or XML one, losslessly). Slack reads `<!channel>`, `<@U123>` and `<url|label>` in a message's text as a
mention or a link; `slack_text` makes them text.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
# A report line that a runner would take for a command: blanks and colour codes, then `::`.
_COMMAND_LINE = re.compile(r"^((?:[ \t]|\x1b\[[0-9;]*m)*)::", re.MULTILINE)
# The first `#` of `##[`, wherever it is: the runner looks for that prefix anywhere in a line.
_LEGACY_COMMAND = re.compile(r"#(?=#\[)")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as os.fsdecode keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    return _UNSAFE.sub(_visible, text)


def no_workflow_commands(report: str) -> str:
    """Escape the first colon of every line that starts with `::`, visibly: `\\x3a:error::`,
    and the first `#` of every `##[`: `\\x23#[error]`."""
    return _COMMAND_LINE.sub(lambda m: m.group(1) + "\\x3a:", no_legacy_commands(report))


def no_legacy_commands(text: str) -> str:
    """GitHub's legacy `##[command]`, wherever it is, made text: `\\x23#[stop-commands]`."""
    return _LEGACY_COMMAND.sub(r"\\x23", text) if "##[" in text else text


def no_legacy_commands_in_data(document: str, escape: str) -> str:
    """A JSON or XML report whose `##[` (only ever inside a string or text: neither syntax has
    `#`) is written with `escape` for its `#` (`\\u0023`, `&#35;`): what a parser reads is
    unchanged, and a CI step that prints the file shows no command to the runner."""
    return document.replace("##[", "#" + escape + "[") if "##[" in document else document


def slack_text(text: str) -> str:
    """Text for a Slack message: inert, and `&`, `<`, `>` escaped as Slack asks, so no
    `<!channel>`, `<@U123>` or `<https://x|label>` from a log pings anyone or hides a link."""
    return inert(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
