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


def render_concise(diagnosis, **options) -> str:
    from logscan.render.concise import render_concise as render

    return render(diagnosis, **options)


def render_github(diagnosis, **options) -> str:
    from logscan.render.github import render_github as render

    return render(diagnosis, **options)


def render_gitlab(diagnosis, **options) -> str:
    from logscan.render.gitlab import render_gitlab as render

    return render(diagnosis, **options)


def render_junit(diagnosis, **options) -> str:
    from logscan.render.junit import render_junit as render

    return render(diagnosis, **options)


def render_sarif(diagnosis, **options) -> str:
    from logscan.render.sarif import render_sarif as render

    return render(diagnosis, **options)


def render_markdown(diagnosis, **options) -> str:
    from logscan.render.markdown import render_markdown as render

    return render(diagnosis, **options)


RENDERERS = {"human": render_human, "json": render_json, "concise": render_concise,
             "github": render_github, "gitlab": render_gitlab, "junit": render_junit,
             "sarif": render_sarif, "markdown": render_markdown}
