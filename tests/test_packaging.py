"""The wheel carries the rule catalogue: a plain non-editable install must find every rule."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from conftest import REPO


def test_wheel_ships_every_rule_file(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    shipped = {n.split("_builtin_rules/", 1)[1] for n in zipfile.ZipFile(wheel).namelist()
               if "/_builtin_rules/" in n and n.endswith(".toml")}
    in_repo = {str(p.relative_to(REPO / "rules")) for p in (REPO / "rules").rglob("*.toml")}
    assert shipped == in_repo and in_repo
