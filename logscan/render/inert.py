"""Untrusted log text made inert: shown, never acted on by a terminal or a CI runner.

Control characters (C0 but tab, DEL, C1) and bidirectional overrides become visible escapes, so
an ESC from a log cannot clear a screen, write the clipboard (OSC 52) or forge a link (OSC 8).
Rich markup needs no escaping here because log text only ever reaches rich as plain `Text`.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    return _UNSAFE.sub(_visible, text)
