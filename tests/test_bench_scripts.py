"""The bench scripts stay runnable as the package moves: each imports, and every name it imports,
at the top or inside a function that only the benchmark runs, exists. Nothing is benchmarked."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

from conftest import REPO

BENCH = REPO / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def test_the_bench_scripts_are_found():
    assert {"run_bench.py", "scale_bench.py", "profile_phases.py"} <= {p.name for p in SCRIPTS}


def imported_names(script: Path):
    """(module, name or None) for every import statement of the script, wherever it is."""
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            yield from ((node.module, alias.name) for alias in node.names)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_bench_script_and_everything_it_imports_import(script, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import each other, as when run
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    for module_name, name in imported_names(script):
        module = importlib.import_module(module_name)
        if name is not None and not hasattr(module, name):
            assert importlib.util.find_spec(f"{module_name}.{name}") is not None, (
                f"{script.name}: {name} is not in {module_name}")
