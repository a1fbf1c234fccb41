"""Renderers: each takes a Diagnosis and returns text. They decide nothing."""

from __future__ import annotations

from logscan.render.human import render_human
from logscan.render.json_v1 import render_json

RENDERERS = {"human": render_human, "json": render_json}
