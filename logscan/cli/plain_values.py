"""Command-line values taken as typed, without pydantic.

typer converts each value it parses through a pydantic TypeAdapter that it builds on first use:
the first value of a run imports pydantic and builds a schema per parameter, most of a small
job's start-up. Every logscan parameter is text, a list of texts, a path or a switch (numbers and
choices arrive as text and are checked in logscan's words), and for those the conversion is the
identity, or `Path(text)` followed by typer's own path checks. Any other value, or any other
type a parameter may gain, goes to typer's converter as before.
"""

from __future__ import annotations

from pathlib import Path

try:  # typer's converter interface, which changes between releases: without it, typer's own way
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path
except ImportError:  # pragma: no cover - depends on the installed typer
    RuntimeParam = None


def _is_text_list(annotation) -> bool:
    return annotation == list[str]


def _taken_as_typed(value, annotation) -> bool:
    if annotation is str or annotation is Path:
        return isinstance(value, str)
    if annotation is bool:
        return isinstance(value, bool)
    return (_is_text_list(annotation) and isinstance(value, (list, tuple))
            and all(isinstance(item, str) for item in value))


if RuntimeParam is not None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class PlainValue(RuntimeParam):
        """Text as text, a list of texts as a list, a path through typer's own path checks."""

        def _coerce_value(self, value, param, ctx):
            if not _taken_as_typed(value, self.annotation):
                return build_runtime_param(param.type_descriptor)._coerce_value(value, param=param,
                                                                                 ctx=ctx)
            if self.annotation is Path:
                return coerce_cli_path(Path(value), self.parameter_info, path_type=Path,
                                       param=param, ctx=ctx)
            return list(value) if _is_text_list(self.annotation) else value


def take_plain_values(params: list) -> list:
    """`params` (a typer command's), each converting its values as PlainValue when its type is
    one of those and it has no parser or file type of its own."""
    for param in params:
        _take_plain_values(param)
    return params


def _take_plain_values(param) -> None:
    descriptor = getattr(param, "type_descriptor", None)
    if RuntimeParam is None or descriptor is None or getattr(param, "_runtime_param", 0) is not None:
        return
    annotation = descriptor.annotation
    plain = annotation in (str, Path, bool) or _is_text_list(annotation)
    info = descriptor.parameter_info
    if plain and descriptor.file_annotation is None and info.parser is None and info.path_type is None:
        param._runtime_param = PlainValue(parameter_info=info, annotation=annotation)
