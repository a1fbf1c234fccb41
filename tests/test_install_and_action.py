"""The install a platform team can follow, the release workflow, and the composite action:
the README says the install that works and every CI snippet uses it; the release builds wheel and
sdist on a tag; action.yml leaves the caller's Python alone, installs pinned, expands globs in
`paths` and reads `args` as shell words. The action's steps run here as GitHub would run them
(bash, with the runner's variables), the install step short of creating its venv."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SAMPLES

README = (REPO / "README.md").read_text()
INSTALL = (REPO / "docs" / "install.md").read_text()
DEPLOYMENT = (REPO / "docs" / "deployment.md").read_text()
DOCS = [README] + [page.read_text() for page in sorted((REPO / "docs").glob("*.md"))]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
RELEASE = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
PINNED_INSTALL = "ddp-logscan @ git+https://github.com/OWNER/logscan@v0.1.0"


def code_blocks(text: str, language: str | None = None) -> list[str]:
    return [body for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S)
            if language is None or lang == language]


def section(title: str, text: str = README) -> str:
    start = text.index(title)
    end = text.find("\n" + title.split(" ", 1)[0] + " ", start + len(title))
    return text[start:end if end != -1 else None]


def test_the_quickstart_is_two_command_lines_and_ci_runs_the_second():
    """Line 1 makes its own environment, installs what running needs and runs a sample; line 2 adds
    the test tools and runs the suite, and .ci/run runs it verbatim after making the same venv."""
    block = code_blocks(section("## Quickstart"), "sh")[0]
    make_and_run, test = block.splitlines()
    assert make_and_run.startswith("python3 -m venv .venv && ") and "pip install -q -e . " in make_and_run
    assert "[test]" not in make_and_run and ".venv/bin/logscan scan sample_logs/" in make_and_run
    assert (REPO / make_and_run.rsplit(" ", 1)[1]).is_dir()
    assert '-e ".[test]"' in test and test.endswith("python -m pytest -q")
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert test in ci and "python3 -m venv .venv" in ci[:ci.index(test)]


def test_the_install_section_says_what_works_and_why_the_name_differs():
    install = INSTALL
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    from logscan.cli.common import DISTRIBUTION

    assert project["name"] == DISTRIBUTION == "ddp-logscan"
    assert project["requires-python"] == ">=3.11" and "Python 3.11 or newer" in install
    assert "unrelated project" in install and "pip install logscan" in install
    assert "python3 -m venv" in install and PINNED_INSTALL in install
    assert "python3 -m build" in install and "dist/ddp_logscan-0.1.0-py3-none-any.whl" in install
    assert f"ddp_logscan-{project['version']}-py3-none-any.whl" in install


def test_every_pip_install_in_the_readme_is_one_that_works():
    """No snippet installs from an index that has no ddp-logscan, or installs PyPI's unrelated logscan."""
    installs = [line for page in DOCS for block in code_blocks(page) for line in block.splitlines()
                if re.search(r"\bpip install\b", line)]
    assert installs
    for line in installs:
        assert not re.search(r"pip install (--quiet )?['\"]?(ddp-)?logscan(\[\w+\])?['\"]?\s*$", line), line
        assert ("-e " in line or PINNED_INSTALL in line or ".whl" in line
                or "install build" in line), line


def _github_workflow() -> dict:
    (workflow,) = [yaml.safe_load(block) for block in code_blocks(section("## GitHub Actions", DEPLOYMENT), "yaml")
                   if block.lstrip().startswith("jobs:")]
    return workflow


def test_the_readme_workflow_installs_pinned_and_may_upload_sarif():
    job = _github_workflow()["jobs"]["smoke"]
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    assert not any("setup-python" in step.get("uses", "") for step in steps)
    install = next(step for step in steps if "pip" in step.get("run", ""))
    assert PINNED_INSTALL in install["run"] and "venv" in install["run"]
    check = next(step for step in steps if step.get("name") == "logscan check")
    assert check["run"].startswith('"$RUNNER_TEMP/logscan/bin/logscan" check')
    upload = next(step for step in steps if "upload-sarif" in step.get("uses", ""))
    assert upload["with"]["sarif_file"] in check["run"]


def test_the_readme_uses_of_the_action_name_only_its_inputs():
    uses = [yaml.safe_load(block) for block in code_blocks(section("## GitHub Actions", DEPLOYMENT), "yaml")
            if "uses: OWNER/logscan@" in block]
    assert uses
    for (step,) in uses:
        assert set(step["with"]) <= set(ACTION["inputs"])


def test_the_release_workflow_builds_wheel_and_sdist_on_a_tag():
    triggers = RELEASE[True]  # YAML 1.1 reads the key `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}
    build = RELEASE["jobs"]["build"]["steps"]
    script = "\n".join(step.get("run", "") for step in build)
    assert "tools/check_release.py" in script and '--tag "$GITHUB_REF_NAME"' in script
    assert (REPO / "tools" / "check_release.py").is_file()
    publish = RELEASE["jobs"]["publish-pypi"]
    assert publish["permissions"] == {"id-token": "write"}
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish") for step in publish["steps"])
    release = RELEASE["jobs"]["github-release"]
    assert release["permissions"] == {"contents": "write"}
    assert "dist/*" in release["steps"][-1]["run"]


def test_check_release_refuses_a_tag_that_is_not_the_version():
    done = subprocess.run([sys.executable, str(REPO / "tools" / "check_release.py"), "--tag", "v9.9.9"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "does not name the version" in done.stderr


def _step(step_id: str) -> dict:
    return next(step for step in ACTION["runs"]["steps"] if step.get("id") == step_id)


def test_the_action_leaves_the_callers_python_alone():
    assert ACTION["runs"]["using"] == "composite"
    assert not any("uses" in step for step in ACTION["runs"]["steps"])  # no setup-python, no other action
    for step in ACTION["runs"]["steps"]:
        assert "GITHUB_PATH" not in step["run"] and "GITHUB_ENV" not in step["run"]
    assert "$VENV" in _step("install")["run"]


def _run_step(step_id: str, tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    """A step's script run as the runner runs a `shell: bash` step, with `${{ }}` values given in env."""
    step = _step(step_id)
    assert step["shell"] == "bash"
    script = tmp_path / f"{step_id}.sh"
    script.write_text(step["run"])
    output = tmp_path / "github_output"
    output.touch()
    runner = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GITHUB_OUTPUT": str(output),
              "RUNNER_TEMP": str(tmp_path)}
    return subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", str(script)],
                          env={**runner, **env}, capture_output=True, text=True, cwd=REPO, timeout=120)


def _outputs(tmp_path: Path) -> dict:
    return dict(line.split("=", 1) for line in (tmp_path / "github_output").read_text().splitlines())


@pytest.mark.parametrize("requirement", ["ddp-logscan", "ddp-logscan>=0.1", "logscan"])
def test_the_action_refuses_an_unpinned_install(tmp_path, requirement):
    done = _run_step("install", tmp_path, {"LOGSCAN_REQUIREMENT": requirement,
                                           "LOGSCAN_BASE_PYTHON": sys.executable,
                                           "ACTION_PATH": str(REPO), "VENV": str(tmp_path / "venv")})
    assert done.returncode == 2 and "is not pinned" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and not (tmp_path / "venv").exists()


def test_the_action_refuses_a_python_older_than_3_11(tmp_path):
    old = tmp_path / "python3.10"
    old.write_text("#!/bin/sh\nexec %s -c 'import sys; sys.exit(1)'\n" % sys.executable)
    old.chmod(0o755)
    done = _run_step("install", tmp_path, {"LOGSCAN_REQUIREMENT": "", "LOGSCAN_BASE_PYTHON": str(old),
                                           "ACTION_PATH": str(REPO), "VENV": str(tmp_path / "venv")})
    assert done.returncode == 2 and "needs Python 3.11 or newer" in done.stderr, done.stderr


def _check(tmp_path: Path, paths: str, args: str, junit: str = "") -> subprocess.CompletedProcess:
    return _run_step("check", tmp_path, {
        "LOGSCAN_PYTHON": sys.executable, "LOGSCAN": str(Path(sys.executable).parent / "logscan"),
        "LOGSCAN_PATHS": paths, "LOGSCAN_ARGS": args, "JUNIT_OUTPUT": junit, "SARIF_OUTPUT": "",
        "ARGV_FILE": str(tmp_path / "argv")})


def test_the_action_expands_globs_and_reads_args_as_shell_words(tmp_path):
    if not (Path(sys.executable).parent / "logscan").exists():
        pytest.skip("no logscan command beside this interpreter (not an installed environment)")
    junit = tmp_path / "junit.xml"
    done = _check(tmp_path, "sample_logs/healthy-2x2/worker-*/launch_ddp.log\n",
                  '--expect-workers 2 --progress-pattern "step [0-9]+/" --isolated', str(junit))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _outputs(tmp_path)["exit-code"] == "0" and junit.is_file()
    argv = (tmp_path / "argv").read_bytes().split(b"\0")[:-1]
    assert argv[:2] == [b"sample_logs/healthy-2x2/worker-0/launch_ddp.log",
                        b"sample_logs/healthy-2x2/worker-1/launch_ddp.log"]
    assert b"step [0-9]+/" in argv  # one argument, spaces and all
    assert done.stdout.rstrip().endswith("HEALTHY healthy-2x2: 2 Worker(s), finished (30/30 steps)")


def test_the_action_fails_a_glob_that_matches_nothing_and_bad_quoting(tmp_path):
    nothing = _check(tmp_path, "smoke-logs/*/launch_ddp.log", "")
    assert nothing.returncode == 2 and "nothing matches 'smoke-logs/*/launch_ddp.log'" in nothing.stderr
    assert _outputs(tmp_path)["exit-code"] == "2"
    quoting = _check(tmp_path, str(SAMPLES / "healthy-2x2"), '--progress-pattern "step')
    assert quoting.returncode == 2 and "args cannot be read as shell words" in quoting.stderr
