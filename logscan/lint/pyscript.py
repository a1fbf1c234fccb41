"""A training script, read with `ast` (never imported or run): how it learns its local rank, and
whether it re-exports WORLD_SIZE."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from logscan.diagnosis import Evidence
from logscan.errors import InputError

UNDERSCORE, HYPHEN = "--local_rank", "--local-rank"


@dataclass(frozen=True)
class TrainScript:
    display: str
    lines: tuple[str, ...]
    local_rank_options: tuple[tuple[str, int], ...]  # (option, line) of add_argument calls
    reads_local_rank_env: bool
    parse_known_args: bool
    world_size_writes: tuple[int, ...]  # lines that set os.environ["WORLD_SIZE"]

    def evidence(self, line: int) -> Evidence:
        return Evidence(self.display, line, self.lines[line - 1] if 0 < line <= len(self.lines) else "")


def _dotted(node) -> str:
    """`os.environ.get` of an attribute chain ending in a name, else ""; iterative, as the
    chain may be long."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(attrs)])


def _const(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def read_train_script(display: str, source: str) -> TrainScript:
    # Python reads a UTF-8 byte order mark as the file's encoding, not as text: so does lint.
    source = source.removeprefix("\ufeff")
    try:
        tree = ast.parse(source, filename=display)
    except SyntaxError as exc:
        raise InputError(f"{display}:{exc.lineno}: cannot parse this Python script: {exc.msg}") from None
    except (RecursionError, MemoryError):  # `1+1+...` or brackets nested past what Python parses
        raise InputError(f"{display}: nested too deeply for Python to parse: not a training script "
                         "logscan can read") from None
    except ValueError as exc:  # NUL bytes, on Pythons that do not call them a SyntaxError
        raise InputError(f"{display}: cannot parse this Python script: {exc}") from None
    options, reads_env, known, writes = [], False, False, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = _dotted(node.func)
            strings = [_const(a) for a in node.args]
            if func.endswith("add_argument"):
                options += [(s, node.lineno) for s in strings if s in (UNDERSCORE, HYPHEN)]
            elif func.endswith("parse_known_args"):
                known = True
            elif func.endswith(("environ.get", "getenv", "environ.setdefault")) and "LOCAL_RANK" in strings:
                reads_env = True
            if func.endswith(("environ.setdefault", "putenv")) and strings[:1] == ["WORLD_SIZE"]:
                writes.append(node.lineno)
            if func.endswith("environ.update") and any(k.arg == "WORLD_SIZE" for k in node.keywords):
                writes.append(node.lineno)
        elif isinstance(node, ast.Subscript) and _dotted(node.value).endswith("environ"):
            key = _const(node.slice)
            if key == "LOCAL_RANK" and isinstance(node.ctx, ast.Load):
                reads_env = True
            if key == "WORLD_SIZE" and isinstance(node.ctx, ast.Store):
                writes.append(node.lineno)
    return TrainScript(display, tuple(source.splitlines()), tuple(options), reads_env, known,
                       tuple(sorted(set(writes))))
