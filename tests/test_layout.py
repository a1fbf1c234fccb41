"""The package listing is the pipeline: each stage imports only the stages below it.

Every import is read from the source, function-level and TYPE_CHECKING ones included, so a cycle
hidden inside a function body fails here as well as one at module level.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import logscan

PACKAGE = Path(logscan.__file__).parent

# Bottom to top. A module may import from its own layer's units and the layers below, never above.
LAYERS = (
    ("errors", "vocabulary", "rule_ids", "limits", "exit_signals", "output_files", "times"),
    ("config", "catalogue", "expectations"),
    ("settings", "diagnosis"),
    ("files",),
    ("scan",),
    ("model",),
    ("findings",),
    ("diagnose",),
    ("render",),
    ("lint", "sweep"),
    ("watch",),
    ("cli",),
    ("__main__",),
)
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str | None:
    """The stage a logscan module belongs to: its package below logscan/, or its kernel module."""
    parts = module.split(".")
    return parts[1] if parts[0] == "logscan" and len(parts) > 1 else None


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every logscan module that `source` (the text of `module`) imports, wherever the statement is."""
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            # `from logscan.scan import lineparse` imports the module logscan.scan.lineparse
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name in MODULES and name not in ("logscan", module)}


GRAPH = {module_name(p): imports_of(p.read_text(), module_name(p), p.name == "__init__.py")
         for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_stage_and_kernel_module_has_a_layer():
    units = {unit_of(m) for m in GRAPH} - {None}
    assert units <= set(RANK), f"modules outside every layer: {sorted(units - set(RANK))}"


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if unit_of(m)))
def test_no_import_upward(module):
    rank = RANK[unit_of(module)]
    upward = sorted(i for i in GRAPH[module] if unit_of(i) and RANK[unit_of(i)] > rank)
    assert not upward, f"{module} (layer {rank}) imports {upward} from a later stage"


def test_no_cycle_between_modules():
    """A cycle between two modules, even inside one package, makes neither readable alone."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state and (cycle := visit(module)):
            pytest.fail("import cycle: " + " → ".join(cycle))


def test_the_walker_sees_function_level_relative_and_from_imports():
    source = ("import typing\nif typing.TYPE_CHECKING:\n    from logscan.diagnose import verdict\n"
              "def f():\n    from ..render import human\n    import logscan.cli\n")
    assert imports_of(source, "logscan.model.job") == {
        "logscan.diagnose", "logscan.diagnose.verdict", "logscan.render", "logscan.render.human",
        "logscan.cli"}


def test_renderers_read_the_diagnosis_alone():
    """A renderer reads the finished Diagnosis and its context: nothing of the scanner (its clock
    included), the job model or the rules."""
    reached = {m: sorted(i for i in GRAPH[m] if unit_of(i) in ("scan", "model", "findings", "files"))
               for m in GRAPH if unit_of(m) == "render"}
    assert not any(reached.values()), {m: r for m, r in reached.items() if r}
