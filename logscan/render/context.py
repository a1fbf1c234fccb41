"""What a renderer is given besides the record: one typed context for every format."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class RenderContext:
    """What a renderer may need besides the record; each format reads the fields it shows."""

    # The rule catalogue, and the rules this run checked (None: every rule of the catalogue):
    # SARIF's rule list and JUnit's testcases cover them.
    catalogue: object | None = None
    checked: tuple[str, ...] | None = None
    # The human report: colour, the terminal's width (None: a pipe or file), every evidence line,
    # the stage timeline.
    color: bool = False
    width: int | None = None
    verbose: bool = False
    timeline: bool = False
    # Who made the report, when and where (SARIF's driver, JUnit's suite).
    tool_version: str = ""
    information_uri: str = ""
    hostname: str = ""
    started: datetime | None = None
    elapsed: float = 0.0
    # The directory paths are made relative to: SARIF's %SRCROOT%, GitLab's project directory.
    base_dir: str | None = None
    project_dir: str | None = None
