"""Renderers: each takes a Diagnosis and returns text. They decide nothing.

Each renderer module is imported when first used, so commands that only need `inert` (such as
`logscan rules`) do not load rich.
"""

from __future__ import annotations


def render_human(diagnosis, **options) -> str:
    from logscan.render.human import render_human as render

    return render(diagnosis, **options)


def render_json(diagnosis, **options) -> str:
    from logscan.render.json_v1 import render_json as render

    return render(diagnosis, **options)


RENDERERS = {"human": render_human, "json": render_json}
