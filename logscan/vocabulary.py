"""The words logscan's stages share, each declared once: what a user or a report can name."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    """A report format: what `--format` takes, each with its `--FORMAT-output FILE` option, in
    the order the help lists them. `logscan.render` maps each to the module that renders it."""

    HUMAN = "human"
    JSON = "json"
    CONCISE = "concise"
    GITHUB = "github"
    GITLAB = "gitlab"
    JUNIT = "junit"
    SARIF = "sarif"
    MARKDOWN = "markdown"
    HTML = "html"
