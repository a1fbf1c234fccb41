"""Settings from `[tool.logscan]` in pyproject.toml or from logscan.toml; the CLI overrides both."""

from __future__ import annotations

import re
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path

from logscan.errors import ConfigError

KNOWN_KEYS = {"rules", "select", "ignore", "progress-patterns", "fail-on", "stall-after", "format"}
_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text: str) -> timedelta:
    text = text.strip()
    if text.isdigit():
        return timedelta(seconds=int(text))
    found = _DURATION.fullmatch(text)
    if not text or not found or not any(found.groups()):
        raise ConfigError(f"invalid duration {text!r}: use e.g. 45s, 30m, 2h, 1h30m")
    days, hours, minutes, seconds = (int(g or 0) for g in found.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def parse_time(text: str) -> datetime:
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"invalid time {text!r}: use ISO 8601, e.g. 2026-11-29T18:00:00Z") from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def find_config(start: Path | None = None) -> tuple[dict, Path | None]:
    """The nearest logscan.toml, or pyproject.toml with a [tool.logscan] table, from start upward."""
    directory = (start or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        for name, table_path in (("logscan.toml", ()), ("pyproject.toml", ("tool", "logscan"))):
            path = folder / name
            if not path.is_file():
                continue
            try:
                with open(path, "rb") as handle:
                    data = tomllib.load(handle)
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{path}: cannot read settings: {exc}") from None
            for key in table_path:
                data = data.get(key) if isinstance(data, dict) else None
            if isinstance(data, dict) and (table_path == () or data is not None):
                unknown = set(data) - KNOWN_KEYS
                if unknown:
                    raise ConfigError(f"{path}: unknown setting {sorted(unknown)[0]!r}; "
                                      f"known: {', '.join(sorted(KNOWN_KEYS))}")
                return _relative_rules(data, path.parent), path
    return {}, None


def _relative_rules(data: dict, base: Path) -> dict:
    rules = data.get("rules", [])
    if isinstance(rules, str):
        rules = [rules]
    if not isinstance(rules, list):
        raise ConfigError(f"setting 'rules' must be a list of directories")
    return {**data, "rules": [str(base / r) for r in rules]}
