"""Renderers: each is `render(record, context) -> str`, where the record is the finished Diagnosis
and the context a RenderContext. They decide nothing: what a finding is (its title, level,
role, location, fingerprint) is in the record.

RENDERERS is the registry, one entry per Format: a new format is one module with its `render`
and one entry here. The human report's module is imported when it is first used, so that a
command that writes no human report (a JSON scan, `logscan rules`) does not load rich.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from logscan.diagnosis import Diagnosis
from logscan.render import concise, github, gitlab, html, json_record, junit, markdown, sarif
from logscan.render.context import RenderContext
from logscan.vocabulary import Format


Render = Callable[[Diagnosis, RenderContext], str]


@dataclass(frozen=True)
class Renderer:
    render: Render
    # It shows logscan's version and home page (read from package metadata, which takes a small
    # job longer than its report: computed only for a format that shows them) or the host's name.
    names_tool: bool = False
    names_host: bool = False


def _human(record: Diagnosis, context: RenderContext) -> str:
    from logscan.render import human  # rich: loaded for the human report alone

    return human.render(record, context)


# One entry per Format, in its order (the help lists the formats and their --FORMAT-output so).
RENDERERS: dict[Format, Renderer] = {
    Format.HUMAN: Renderer(_human),
    Format.JSON: Renderer(json_record.render),
    Format.CONCISE: Renderer(concise.render),
    Format.GITHUB: Renderer(github.render),
    Format.GITLAB: Renderer(gitlab.render),
    Format.JUNIT: Renderer(junit.render, names_host=True),
    Format.SARIF: Renderer(sarif.render, names_tool=True),
    Format.MARKDOWN: Renderer(markdown.render),
    Format.HTML: Renderer(html.render),
}


def render(fmt: Format | str, record: Diagnosis, context: RenderContext = RenderContext()) -> str:
    """The record in format `fmt`."""
    return RENDERERS[Format(fmt)].render(record, context)
