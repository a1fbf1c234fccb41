"""Build the wheel and the sdist as a release does, install the wheel into a fresh virtual
environment, and run it: what `.github/workflows/release.yml` checks before publishing, runnable
on a developer's machine (`python tools/check_release.py`; needs `pip install build`).

Checks: the tag (with --tag) names pyproject.toml's version; `python -m build` makes exactly one
wheel and one sdist named for the distribution and version; the wheel carries every rule file
and the sdist the rules, tests and README; the wheel installs with its dependencies into a new
venv, where `logscan --version` prints the version and `logscan scan` diagnoses a real sample as
its expected.json says. Prints how long each step took. Exit status 0 when every check holds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_logs" / "missing-worker"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", help="the release tag (vX.Y.Z): it must name pyproject.toml's version")
    parser.add_argument("--dist", type=Path, help="build into this directory (default: a temporary one)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="build with the current environment's hatchling (no download)")
    options = parser.parse_args()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    stem = name.replace("-", "_")
    if options.tag is not None and options.tag != f"v{version}":
        return failed(f"tag {options.tag} does not name the version in pyproject.toml ({version}): "
                      f"tag v{version}, or change the version")
    with tempfile.TemporaryDirectory(prefix="logscan-release-") as scratch:
        dist = options.dist or Path(scratch) / "dist"
        started = time.monotonic()
        build = [sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)]
        if options.no_isolation:
            build.insert(3, "--no-isolation")
        run(build)
        lap("build (wheel + sdist)", started)
        wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
        wanted = (f"{stem}-{version}-py3-none-any.whl", f"{stem}-{version}.tar.gz")
        if [p.name for p in wheels] != [wanted[0]] or [p.name for p in sdists] != [wanted[1]]:
            return failed(f"expected {wanted[0]} and {wanted[1]} in {dist}, found "
                          f"{sorted(p.name for p in dist.iterdir())}")
        rules = {str(p.relative_to(REPO / "rules")) for p in (REPO / "rules").rglob("*.toml")}
        shipped = {n.split("/_builtin_rules/", 1)[1] for n in zipfile.ZipFile(wheels[0]).namelist()
                   if "/_builtin_rules/" in n and n.endswith(".toml")}
        if shipped != rules:
            return failed(f"the wheel's rules differ from rules/: {sorted(shipped ^ rules)[:5]}")
        with tarfile.open(sdists[0]) as sdist:
            names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
        missing = [p for p in ("pyproject.toml", "README.md", "rules", "tests", "logscan/__init__.py")
                   if not any(n == p or n.startswith(p + "/") for n in names)]
        if missing:
            return failed(f"the sdist lacks {', '.join(missing)}")

        started = time.monotonic()
        env_dir = Path(scratch) / "venv"
        venv.create(env_dir, with_pip=True)
        run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet",
             "--disable-pip-version-check", str(wheels[0])])
        lap("fresh venv + install of the wheel", started)
        logscan = str(env_dir / "bin" / "logscan")
        shown = run([logscan, "--version"]).stdout.strip()
        if shown != f"logscan {version}":
            return failed(f"the installed command says {shown!r}, not 'logscan {version}'")
        started = time.monotonic()
        scanned = subprocess.run([logscan, "scan", str(SAMPLE), "--isolated", "--format", "json"],
                                 capture_output=True, text=True, cwd=scratch)
        lap("logscan scan of a sample, installed", started)
        expect = json.loads((SAMPLE / "expected.json").read_text())["expect"]
        report = json.loads(scanned.stdout or "{}")
        root = (report.get("root_cause") or {}).get("rule")
        if scanned.returncode != 1 or root != expect["root_cause"]["rule"]:
            return failed(f"the installed logscan diagnosed {SAMPLE.name} as {root!r} (exit "
                          f"{scanned.returncode}), not {expect['root_cause']['rule']!r}: "
                          f"{scanned.stderr.strip()}")
    print(f"ok: {wanted[0]} and {wanted[1]} build, install and run")
    return 0


def run(command: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(failed(f"{' '.join(command[:4])} ... exited {done.returncode}:\n"
                        f"{(done.stderr or done.stdout).strip()[-2000:]}"))
    return done


def lap(step: str, started: float) -> None:
    print(f"{step}: {time.monotonic() - started:.1f} s")


def failed(message: str) -> int:
    print(f"check_release: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
