"""A small job's start-up, guarded without timing anything (bench/startup.py times it): what each
command imports (`python -X importtime`), that command-line values reach the commands without
pydantic, that the built-in catalogue loads without compiling its patterns yet is checked here as
a user's rule file is, and that its tables come from the user's cache only when the cache can be
trusted. The logs are the real samples."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
import typer

from conftest import POST_MORTEM_NOW, SAMPLES

HEALTHY = SAMPLES / "healthy-2x2"
CRASHED = SAMPLES / "crash-mid-training"
_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)
def _typer_needs_pydantic() -> bool:
    """typer converts every command-line value through pydantic from 0.29 on: any command then
    loads it, and logscan (which uses typer's public API only) cannot keep it out."""
    from importlib.metadata import requires

    return any(r.split(";")[0].strip().startswith("pydantic") for r in requires("typer") or ())


# Modules a small job's command loads only when its output needs them (pydantic: none of logscan's
# own outputs needs it).
OWN_PYDANTIC = () if _typer_needs_pydantic() else ("pydantic",)
# pydantic's plugin loader reads entry points with importlib.metadata
METADATA = () if _typer_needs_pydantic() else ("importlib.metadata",)
HEAVY = ("pandas", "drain3", "rich", *OWN_PYDANTIC, *METADATA)
OTHER_COMMANDS = tuple(f"logscan.cli.{name}" for name in ("check", "report", "sweep", "rules", "lint"))


def imported(*args) -> tuple[set[str], str]:
    """(every module `python -X importtime -m logscan ARGS` imported, its standard output)."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "logscan", *map(str, args)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    modules = set(_IMPORTED.findall(result.stderr))
    assert "logscan.cli" in modules, result.stderr[-2000:]  # the profile was read
    return modules, result.stdout


def test_a_json_scan_loads_neither_rich_nor_pandas_nor_pydantic_nor_the_other_commands():
    modules, out = imported("scan", HEALTHY, "--now", POST_MORTEM_NOW, "--format", "json")
    assert json.loads(out)["verdict"] == "HEALTHY"
    assert not modules & {*HEAVY, *OTHER_COMMANDS}, sorted(modules & {*HEAVY, *OTHER_COMMANDS})
    assert not any(m.startswith(("rich.", "pandas.", *(f"{p}." for p in OWN_PYDANTIC))) for m in modules)


def test_the_human_report_of_a_crash_loads_rich_and_drain3_but_not_pandas_or_pydantic():
    modules, out = imported("scan", CRASHED, "--now", POST_MORTEM_NOW)
    assert out.startswith("FAILED")
    # what this report needs: rich for its table, drain3 for the failing rank's novel lines
    # (drain3 loads jsonpickle, which reads its own version from importlib.metadata)
    assert {"rich.console", "drain3"} <= modules
    assert not modules & {"pandas", *OWN_PYDANTIC}


def test_rules_and_version_load_no_pattern_engine_and_no_renderer_library():
    modules, out = imported("rules")
    assert "missing-worker" in out
    assert not modules & {"regex", "hyperscan", "rich", *OWN_PYDANTIC, "logscan.scan"}
    modules, out = imported("--version")
    assert out.startswith("logscan ")
    assert not modules & {"logscan.catalogue", "regex", "rich", *OWN_PYDANTIC, *OTHER_COMMANDS}


def test_sarif_still_names_the_installed_version(run_cli):
    """The version comes from package metadata, read only for the format that shows it."""
    from logscan.cli.common import version

    result = run_cli("scan", HEALTHY, "--now", POST_MORTEM_NOW, "--format", "sarif")
    assert json.loads(result.output)["runs"][0]["tool"]["driver"]["version"] == version()


def test_values_typer_converts_reach_a_command_under_logscans_group():
    """Text, lists of text, paths, numbers and switches are typer's to convert (synthetic command
    here), and a bad value is its error, said in one line by the group."""
    from typer.testing import CliRunner

    from logscan.cli import LogscanGroup

    app = typer.Typer(cls=LogscanGroup)
    seen = {}

    @app.command()
    def given(path: Annotated[Path, typer.Option()], count: Annotated[int, typer.Option()] = 0,
              names: Annotated[list[str], typer.Option("--name")] = [],
              flag: Annotated[bool, typer.Option()] = False) -> None:
        seen.update(path=path, count=count, names=names, flag=flag)

    @app.callback()
    def root() -> None:
        pass

    runner = CliRunner()
    result = runner.invoke(app, ["given", "--path", "a/b", "--count", "3", "--name", "x",
                                 "--name", "y", "--flag"])
    assert result.exit_code == 0, result.output
    assert seen == {"path": Path("a/b"), "count": 3, "names": ["x", "y"], "flag": True}
    result = runner.invoke(app, ["given", "--path", "a", "--count", "three"])
    assert result.exit_code == 2 and "--count" in result.output, result.output


def test_every_builtin_rule_passes_the_checks_a_users_rule_file_gets():
    from logscan.catalogue import builtin_rules_dir, load_catalogue, load_rule_file, rule_files

    catalogue = load_catalogue()
    files = rule_files(builtin_rules_dir())
    assert len(files) == len(catalogue.rules) + len(catalogue.signals) + len(catalogue.harmless)
    for path in files:
        checked = load_rule_file(path)  # patterns compiled, the groups code reads defined
        assert catalogue.get(checked.id) == checked, path.name


def test_the_builtin_patterns_are_compiled_when_first_used_and_a_users_at_load(tmp_path):
    from logscan.catalogue import builtin_rules_dir, load_catalogue

    catalogue = load_catalogue()
    signature = catalogue.rules["cuda-out-of-memory"]
    assert "compiled" not in vars(signature)
    assert signature.match(signature.tests["fire"][0]) is not None
    assert "compiled" in vars(signature)

    mine = tmp_path / "mine.toml"
    mine.write_text((builtin_rules_dir() / "cuda-out-of-memory.toml").read_text()
                    .replace('id = "cuda-out-of-memory"', 'id = "my-out-of-memory"'))
    users = load_catalogue([tmp_path]).rules["my-out-of-memory"]
    assert "compiled" in vars(users)


def _tables_cache(cache_home: Path) -> Path:
    (cache,) = (cache_home / "logscan").glob("catalogue-*.json")
    return cache


def _toml_reads(monkeypatch) -> list:
    """Counts the rule files parsed as TOML from now on."""
    import logscan.catalogue

    reads, parse = [], logscan.catalogue.tomllib.loads
    monkeypatch.setattr(logscan.catalogue.tomllib, "loads",
                        lambda text: reads.append(1) or parse(text))
    return reads


def test_the_builtin_tables_are_read_from_the_users_cache_once_kept(tmp_path, monkeypatch):
    from logscan.catalogue import load_catalogue

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = load_catalogue()
    assert _tables_cache(tmp_path).stat().st_size > 0
    reads = _toml_reads(monkeypatch)
    again = load_catalogue()
    assert reads == []
    assert (again.rules, again.signals) == (first.rules, first.signals)


def _garbage(cache: Path) -> None:
    cache.write_bytes(b"\x00\xff not json")


def _truncated(cache: Path) -> None:
    cache.write_bytes(cache.read_bytes()[:1000])


def _another_shape(cache: Path) -> None:
    payload = json.loads(cache.read_text())
    payload["tables"] = payload["tables"][:-1]
    cache.write_text(json.dumps(payload))


def _an_untrue_table(cache: Path) -> None:
    payload = json.loads(cache.read_text())
    payload["tables"][0]["kind"] = "not-a-kind"
    cache.write_text(json.dumps(payload))


def _writable_by_others(cache: Path) -> None:
    cache.chmod(0o666)


def _a_link(cache: Path) -> None:
    real = cache.with_name("elsewhere.json")
    cache.rename(real)
    cache.symlink_to(real)


@pytest.mark.parametrize("damage", [_garbage, _truncated, _another_shape, _an_untrue_table,
                                    _writable_by_others, _a_link], ids=lambda f: f.__name__[1:])
def test_a_cache_that_is_damaged_untrue_or_not_the_users_own_is_not_used(tmp_path, monkeypatch, damage):
    """Synthetic damage to a cache logscan wrote: the rule files are read instead, the catalogue
    is the one they say, and the cache is written anew."""
    from logscan.catalogue import load_catalogue

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = load_catalogue()
    damage(_tables_cache(tmp_path))
    reads = _toml_reads(monkeypatch)
    again = load_catalogue()
    assert len(reads) == len(first.rules) + len(first.signals) + len(first.harmless)
    assert (again.rules, again.signals, again.harmless) == (first.rules, first.signals, first.harmless)
    reads.clear()
    load_catalogue()
    assert reads == []  # rewritten, and used


def test_a_scan_writing_every_format_never_imports_pandas(tmp_path):
    """pandas serves the sweep's fleet view and export alone: no format of a scan loads it."""
    from logscan.vocabulary import Format

    files = [arg for fmt in Format if fmt != Format.HUMAN
             for arg in (f"--{fmt.value}-output", tmp_path / f"report.{fmt.value}")]
    modules, out = imported("scan", CRASHED, "--now", POST_MORTEM_NOW, "--timeline", "-v", *files)
    assert out.startswith("FAILED") and all(p.stat().st_size for p in tmp_path.iterdir())
    assert not {m for m in modules if m == "pandas" or m.startswith(("pandas.", "numpy"))}


@pytest.mark.parametrize("count, words", [
    ("worker_count=1", "1 of world_size=8 ranks checked in"),
    ("num_workers_joined=9", "more processes checked in than the world has"),
])
def test_a_log_that_stops_while_init_waits_in_its_store_barrier_says_so(run_cli, tmp_path, count, words):
    """distributed_c10d.py's _store_based_barrier (`worker_count` up to 2.0, `num_workers_joined` from 2.1),
    synthetic lines: still waiting, not failed, and what the count says."""
    from conftest import paste_report
    line = ("[2025-03-11 05:21:04,421][torch.distributed.distributed_c10d][INFO] - Waiting in store based barrier to "
            f"initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=8, {count}, "
            "timeout=0:30:00)")
    report = paste_report(run_cli, tmp_path, line + "\n" + line + "\n")
    assert report["verdict"] == "INCONCLUSIVE" and words in report["verdict_reason"]
    assert "still waiting in its store barrier" in report["verdict_reason"]
