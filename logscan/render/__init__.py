"""Renderers: each takes a Diagnosis and returns text. They decide nothing.

Each renderer module is imported when first used, so commands that only need `inert` (such as
`logscan rules`) do not load rich.
"""

from __future__ import annotations

import inspect
from importlib import import_module

from logscan.vocabulary import Format

# The module of this package that renders each format, with a `render_<format>` function. A format
# is its module's name unless named here.
MODULES = {fmt: {Format.JSON: "json_v1"}.get(fmt, fmt.value) for fmt in Format}


def _renderer(fmt: str, module: str):
    def render(diagnosis, **options) -> str:
        return getattr(import_module(f"{__name__}.{module}"), f"render_{fmt}")(diagnosis, **options)

    render.__name__ = render.__qualname__ = f"render_{fmt}"
    return render


# Each format's renderer, keyed by the Format (which equals its name).
RENDERERS = {fmt: _renderer(fmt.value, module) for fmt, module in MODULES.items()}


def reads(fmt: str, option: str) -> bool:
    """Whether the renderer of `fmt` takes the keyword `option`: a caller computes only what the
    format shows (the installed version, read from package metadata, for SARIF alone)."""
    function = getattr(import_module(f"{__name__}.{MODULES[fmt]}"), f"render_{fmt}")
    return option in inspect.signature(function).parameters
