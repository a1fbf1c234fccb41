"""Renderers: each takes a Diagnosis and returns text. They decide nothing.

Each renderer module is imported when first used, so commands that only need `inert` (such as
`logscan rules`) do not load rich.
"""

from __future__ import annotations

from importlib import import_module

# Format name → the module of this package that renders it, with a `render_<format>` function.
# In this order `--format` and the `--FORMAT-output` options are listed.
MODULES = {"human": "human", "json": "json_v1", "concise": "concise", "github": "github",
           "gitlab": "gitlab", "junit": "junit", "sarif": "sarif", "markdown": "markdown"}


def _renderer(fmt: str, module: str):
    def render(diagnosis, **options) -> str:
        return getattr(import_module(f"{__name__}.{module}"), f"render_{fmt}")(diagnosis, **options)

    render.__name__ = render.__qualname__ = f"render_{fmt}"
    return render


RENDERERS = {fmt: _renderer(fmt, module) for fmt, module in MODULES.items()}
