"""The command package: one module per command registered in one place, the entry points,
`--version`, and the exit statuses documented in `--help`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from conftest import REPO


def test_entry_points_and_exit_statuses():
    from logscan import cli

    assert (cli.EXIT_HEALTHY, cli.EXIT_FINDINGS, cli.EXIT_USAGE, cli.EXIT_INTERNAL,
            cli.EXIT_INTERRUPTED) == (0, 1, 2, 3, 130)
    assert callable(cli.main) and cli.app is not None
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, name = scripts["logscan"].partition(":")
    assert (module, name) == ("logscan.cli", "main")


def test_every_command_module_is_registered():
    """A command is one module of logscan/cli/ with a `register(app)`, named in COMMANDS."""
    from importlib import import_module

    from logscan import cli

    package = Path(cli.__file__).parent
    # common: what every command shares; exit_codes; outputs: what scan and check share about output;
    # options: the options, declared once.
    modules = {p.stem for p in package.glob("*.py")} - {"__init__", "common", "exit_codes", "outputs",
                                                        "options"}
    assert set(cli.COMMANDS) == modules
    for name in cli.COMMANDS:
        assert callable(import_module(f"logscan.cli.{name}").register)


def test_help_lists_the_commands_and_the_exit_statuses(run_cli):
    for args in ((), ("--help",), ("scan", "--help"), ("report", "-h")):
        result = run_cli(*args)
        assert "Exit status:" in result.output, args
        for line in ("0    HEALTHY or RUNNING", "1    FAILED or INCONCLUSIVE", "2    usage", "3    internal error",
                     "130  interrupted"):
            assert line in result.output, (args, line)
    top = run_cli("--help").output
    assert "scan " in top and "rules " in top and "--version" in top
    scan = run_cli("scan", "--help").output
    assert "--config FILE" in scan and "--isolated" in scan


def test_version(run_cli, monkeypatch):
    from importlib import metadata

    result = run_cli("--version")
    assert result.exit_code == 0
    assert result.output == f"logscan {metadata.version('ddp-logscan')}\n"

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    import logscan

    monkeypatch.setattr(metadata, "version", not_installed)
    assert run_cli("--version").output == f"logscan {logscan.__version__}\n"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_the_installed_typer_meets_the_declared_floor():
    """pyproject.toml declares the oldest typer logscan runs on; the suite runs on the one
    installed, which must not be older (run it once with typer pinned to the floor to test that)."""
    from importlib.metadata import version

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (floor,) = [d.split(">=", 1)[1].split(",")[0] for d in declared if d.startswith("typer>=")]
    assert _version(version("typer")) >= _version(floor), (version("typer"), floor)


def test_no_private_typer_or_click_api_is_used():
    """typer's public API only: no module of its own with a leading underscore (typer._click,
    typer._coercion), no class of a command swapped under it, no signature written over a
    function's; what typer reads is what the code declares."""
    import logscan

    private = re.compile(r"\btyper\._|\b__class__\s*=|__signature__|\bimport click\b|\bfrom click\b")
    offenders = [f"{path.relative_to(REPO)}:{n}" for path in Path(logscan.__file__).parent.rglob("*.py")
                 for n, line in enumerate(path.read_text().splitlines(), 1) if private.search(line)]
    assert not offenders, offenders
