"""The deployment page's CI, cron, systemd and Kubernetes examples, and action.yml, run as written.

Each example is taken from docs/deployment.md by the heading it sits under (a block that moves or whose
heading is renamed fails here, loudly), and its shell runs as its platform runs it: a GitHub
workflow's `run:` steps with `bash -e` (the default shell) in order, `continue-on-error` and
`if: always()` honoured; action.yml's steps with `bash --noprofile --norc -eo pipefail`, their
`${{ }}` values evaluated from the page's `with:` and the action's defaults; GitLab's `script:`
as one `bash -eo pipefail` script; Jenkins' `sh` steps with `sh -xe` after Groovy's string escapes;
the cron line with `/bin/sh -c` and cron's own environment (PATH=/usr/bin:/bin); the systemd
unit's ExecStart split into words with no shell, its Environment= and StateDirectory= applied; the
Kubernetes container's command executed as written, no shell, once per completion index. Each runs
on real samples from sample_logs/, laid out where the example expects them, with the variables the
platform sets (RUNNER_TEMP, GITHUB_STEP_SUMMARY, CI_PROJECT_DIR, WORKSPACE_TMP,
JOB_COMPLETION_INDEX, ...), and the test checks its exit status and what it says it produces.

What differs from a real run, and nothing else:
- the line `pip install "ddp-logscan @ git+https://github.com/OWNER/logscan@..."` (and action.yml's
  `pip install "$requirement"`) is the one line replaced: by a link to the `logscan` command of the
  package installed for these tests (the repository has no public address yet, and tests use no
  network). The `python3 -m venv` before it makes its venv `--without-pip`: ensurepip takes about
  7 s on the 2-core test machine, and the pip it installs is only used by the replaced line;
- `./scripts/submit_smoke_job.sh` and `./scripts/fetch_worker_logs.sh` are the user's own scripts:
  synthetic stand-ins here exit with the sample's launcher status and copy its Worker logs;
- absolute paths (/mnt, /var, /tmp, /opt) are moved under the test's temporary directory, and the
  Slack webhook URL points to a local server that records what it is sent;
- the systemd unit runs as the test's user, not User=logscan.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt  # rich's own Markdown parser: fences and headings as CommonMark reads them

from conftest import REPO, SAMPLES

PAGE = (REPO / "docs" / "deployment.md").read_text()
INSTALL_PAGE = (REPO / "docs" / "install.md").read_text()
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
INSTALLED = Path(sys.executable).parent / "logscan"
REPOSITORY_INSTALL = re.compile(
    r'^(?P<indent>[ \t]*)(?P<quote>"?)(?P<venv>[^"\s]+)/bin/pip(?P=quote) install\b'
    r'.*"ddp-logscan @ git\+https://github\.com/OWNER/logscan@v[0-9.]+"[ \t]*$', re.M)
MAKE_VENV = re.compile(r"(?<![\w-])-m venv (?=\S)")
SLACK_WEBHOOK = re.compile(r"https://hooks\.slack\.com/services/[\w/]+")
# The example's absolute paths, moved under the test's root ($RUNNER_TEMP/... and the like are not).
ABSOLUTE = re.compile(r"(?<![\w.$}/~-])/(?=(?:mnt|var|tmp|opt)/)")
FAILED_SAMPLE = "crash-mid-training"   # 2 Workers x 2 GPUs: rank 1 raises at step 10 of 30
HEALTHY_SAMPLE = "healthy-2x2"         # 2 Workers x 2 GPUs, 30 steps, finished


pytestmark = pytest.mark.skipif(not INSTALLED.exists(),
                                reason="no logscan command beside this interpreter (not an installed environment)")


# --- the page's examples, by heading ---------------------------------------------------------

@dataclass
class Block:
    language: str
    text: str
    caption: str  # the paragraph just before the block


def examples(heading: str, page: str = PAGE) -> list[Block]:
    """The fenced blocks under `heading` ("## Cron"), up to the next heading of its level or above."""
    level, title = len(heading.split(" ", 1)[0]), heading.split(" ", 1)[1]
    tokens = MarkdownIt().parse(page)
    starts = [i for i, token in enumerate(tokens) if token.type == "heading_open"
              and token.tag == f"h{level}" and tokens[i + 1].content == title]
    assert len(starts) == 1, f"the page has {len(starts)} headings {heading!r}: the example moved"
    blocks, caption = [], ""
    for i in range(starts[0] + 3, len(tokens)):
        token = tokens[i]
        if token.type == "heading_open" and int(token.tag[1]) <= level:
            break
        if token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            caption = token.content
        elif token.type == "fence":
            blocks.append(Block(token.info.strip(), token.content, caption))
    assert blocks, f"no example under {heading!r}"
    return blocks


def one_block(heading: str, language: str, holding: str = "", page: str = PAGE) -> Block:
    found = [b for b in examples(heading, page) if b.language == language and holding in b.text]
    assert len(found) == 1, f"{len(found)} {language} blocks holding {holding!r} under {heading!r}"
    return found[0]


def installed_from_the_tests(script: str) -> tuple[str, int]:
    """The script with its repository install replaced by a link to the tested package, and how
    many such installs it had."""
    script, replaced = REPOSITORY_INSTALL.subn(
        lambda m: f'{m["indent"]}ln -s {shlex.quote(str(INSTALLED))} {m["quote"]}{m["venv"]}/bin/logscan{m["quote"]}',
        script)
    return (MAKE_VENV.sub("-m venv --without-pip ", script) if replaced else script), replaced


# --- what the platforms provide ------------------------------------------------------------------

@dataclass
class Webhook:
    url: str
    posts: list[dict] = field(default_factory=list)


@pytest.fixture
def webhook():
    posts: list[dict] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Webhook(f"http://127.0.0.1:{server.server_port}/services/T000/B000/XXXX", posts)
    server.shutdown()
    server.server_close()


def runner_path(tmp_path: Path) -> str:
    """A CI runner's PATH: its python3 (3.11 or newer, as setup-python or the image gives) and the
    system's tools; not the tests' venv, so an example that forgets where it installed logscan fails."""
    tools = tmp_path / "runner-bin"
    tools.mkdir(exist_ok=True)
    python3 = tools / "python3"
    if not python3.exists():
        python3.symlink_to(getattr(sys, "_base_executable", sys.executable))
    return f"{tools}:/usr/bin:/bin"


def launcher_status(sample: str) -> int:
    workers = json.loads((SAMPLES / sample / "expected.json").read_text())["workers"]
    return max(int(worker["launch_exit_status"]) for worker in workers)


def workspace(tmp_path: Path, sample: str) -> Path:
    """A checkout with stand-ins (synthetic) for the user's own scripts the examples call: the smoke
    job's submission exits as the sample's launchers did, the fetch copies its Worker logs."""
    checkout = tmp_path / "workspace"
    scripts = checkout / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "submit_smoke_job.sh").write_text(
        "#!/bin/sh\n# stand-in: the smoke job already ran; its launchers' exit status\n"
        f"exit {launcher_status(sample)}\n")
    (scripts / "fetch_worker_logs.sh").write_text(
        "#!/bin/sh\n# stand-in: one folder per Worker, as a real fetch leaves them\nset -e\n"
        f'mkdir -p "$1"\ncp -R {shlex.quote(str(SAMPLES / sample))}/worker-* "$1"\n')
    for script in scripts.iterdir():
        script.chmod(0o755)
    return checkout


def relocated(text: str, root: Path, webhook: Webhook | None = None) -> str:
    text = ABSOLUTE.sub(f"{root}/", text)
    return SLACK_WEBHOOK.sub(webhook.url, text) if webhook else text


def run(argv: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def junit_failures(path: Path) -> int:
    suites = ET.parse(path).getroot()
    suites = [suites] if suites.tag == "testsuite" else list(suites.iter("testsuite"))
    assert suites, f"{path}: no testsuite"
    return sum(int(suite.get("failures", 0)) + int(suite.get("errors", 0)) for suite in suites)


def assert_sarif_points_into(path: Path, checkout: Path) -> list[dict]:
    sarif = json.loads(path.read_text())
    assert sarif["version"] == "2.1.0"
    (sarif_run,) = sarif["runs"]
    bases = {name: base["uri"] for name, base in sarif_run.get("originalUriBaseIds", {}).items()}
    for result in sarif_run["results"]:
        for location in result["locations"]:
            artifact = location["physicalLocation"]["artifactLocation"]
            assert bases[artifact["uriBaseId"]] == checkout.as_uri() + "/"
            assert (checkout / artifact["uri"]).is_file(), artifact
    return sarif_run["results"]


def assert_annotations_open_files(stdout: str, checkout: Path) -> list[str]:
    """Every `::error`/`::warning`/`::notice` with a file names one in the checkout, at a line it has."""
    annotations = [line for line in stdout.splitlines() if re.match(r"::(error|warning|notice) ", line)]
    for line in annotations:
        place = dict(re.findall(r"(file|line)=([^,:]+)", line.split("::")[1]))
        if "file" in place:
            lines = (checkout / place["file"]).read_text(errors="replace").splitlines()
            assert 1 <= int(place["line"]) <= len(lines), line
    return annotations


# --- GitHub Actions ------------------------------------------------------------------------------

# What each action the page's workflow uses needs of the job's token (from each action's docs:
# a check run needs checks: write, a code-scanning upload security-events: write).
PERMISSIONS_NEEDED = {"actions/checkout@": {"contents": "read"},
                      "mikepenz/action-junit-report@": {"checks": "write"},
                      "github/codeql-action/upload-sarif@": {"security-events": "write"},
                      "actions/upload-artifact@": {}}


def github_workflow() -> dict:
    return yaml.safe_load(one_block("## GitHub Actions", "yaml", "jobs:").text)


def github_runner_env(tmp_path: Path, checkout: Path) -> dict:
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    summary = temp / "step-summary.md"
    summary.touch()
    return {"PATH": runner_path(tmp_path), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
            "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_TEMP": str(temp),
            "GITHUB_WORKSPACE": str(checkout), "GITHUB_STEP_SUMMARY": str(summary)}


@dataclass
class StepRun:
    step: dict
    done: subprocess.CompletedProcess | None  # None: a `uses:` step, or one skipped


def run_github_job(job: dict, checkout: Path, env: dict) -> tuple[list[StepRun], bool]:
    """The job's steps in order, as the runner takes them; `uses:` steps are left to the caller."""
    failed, ran, installs = False, [], 0
    for number, step in enumerate(job["steps"]):
        condition = step.get("if", "success()")
        assert condition in ("success()", "always()"), f"no model here of if: {condition}"
        if (failed and condition == "success()") or "run" not in step:
            ran.append(StepRun(step, None))
            continue
        assert "shell" not in step, "the runner's default shell is modelled, not another"
        script = checkout.parent / f"step-{number}.sh"
        text, replaced = installed_from_the_tests(step["run"])
        installs += replaced
        script.write_text(text)
        output = checkout.parent / f"step-{number}-output"
        output.touch()
        done = run(["bash", "-e", str(script)], {**env, "GITHUB_OUTPUT": str(output)}, checkout)
        ran.append(StepRun(step, done))
        failed |= done.returncode != 0 and not step.get("continue-on-error", False)
    assert installs == 1, f"{installs} repository installs in the workflow"
    return ran, failed


def test_the_readmes_github_workflow_grants_what_its_actions_need():
    """A job that names its permissions gets none of the others: each action's must be there."""
    job = github_workflow()["jobs"]["smoke"]
    granted = job["permissions"]
    for step in job["steps"]:
        if "uses" in step:
            (needs,) = [n for prefix, n in PERMISSIONS_NEEDED.items() if step["uses"].startswith(prefix)]
            for scope, level in needs.items():
                assert granted.get(scope) in ({"read": ("read", "write"), "write": ("write",)}[level]), \
                    f"{step['uses']} needs {scope}: {level}"


def test_the_readmes_github_workflow_gates_a_failed_smoke_run_and_keeps_its_reports(tmp_path):
    checkout = workspace(tmp_path, FAILED_SAMPLE)
    env = github_runner_env(tmp_path, checkout)
    ran, failed = run_github_job(github_workflow()["jobs"]["smoke"], checkout, env)
    by_name = {r.step.get("name", r.step.get("uses")): r for r in ran}
    submit = next(r for r in ran if "submit_smoke_job" in r.step.get("run", ""))
    assert submit.done.returncode == 1 and submit.step["continue-on-error"]  # the logs decide
    for r in ran:
        if r.done is not None and r is not by_name["logscan check"] and r is not submit:
            assert r.done.returncode == 0, (r.step, r.done.stderr)
    check = by_name["logscan check"].done
    assert check.returncode == 1 and failed, check.stdout + check.stderr
    assert "logscan: check fails" in check.stderr
    # Annotations on stdout (github is the format under Actions): the root cause is the one error
    # it names, its consequences notices; each opens its file at its line.
    annotations = assert_annotations_open_files(check.stdout, checkout)
    assert [a for a in annotations if "title=logscan root cause" in a][0].startswith("::error file=smoke-logs/worker-")
    assert any(a.startswith("::notice ") and "consequence" in a for a in annotations)
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.startswith("## ❌ logscan: FAILED smoke-logs: crash-during-training"), summary[:200]
    # The steps after it run (if: always()) on the files it wrote.
    later = [r.step for r in ran if r.step.get("if") == "always()"]
    assert len(later) == 3 and all("uses" in step for step in later)
    for step in later:
        uses, given = step["uses"], step["with"]
        if uses.startswith("mikepenz/action-junit-report@"):
            assert junit_failures(checkout / given["report_paths"]) >= 1
        elif uses.startswith("github/codeql-action/upload-sarif@"):
            assert assert_sarif_points_into(checkout / given["sarif_file"], checkout)
        elif uses.startswith("actions/upload-artifact@"):
            for path in given["path"].split():
                assert (checkout / path).exists(), path
        else:
            raise AssertionError(f"a step this test does not check: {uses}")


# --- action.yml, as the page's step uses it ---------------------------------------------------

EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def evaluate(value: str, context: dict[str, str]) -> str:
    def lookup(match: re.Match) -> str:
        assert match[1] in context, f"action.yml uses ${{{{ {match[1]} }}}}, which this test does not model"
        return context[match[1]]
    return EXPRESSION.sub(lookup, str(value))


def test_the_readmes_action_step_runs_the_composite_action(tmp_path):
    (step,) = yaml.safe_load(one_block("## GitHub Actions", "yaml", "uses: OWNER/logscan@").text)
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    assert {name for name, spec in ACTION["inputs"].items() if spec.get("required")} <= set(step["with"])
    inputs.update({name: str(value) for name, value in step["with"].items()})
    checkout = workspace(tmp_path, FAILED_SAMPLE)
    env = github_runner_env(tmp_path, checkout)
    # The step before it in a workflow: the logs where `paths` looks for them.
    fetch = run(["./scripts/fetch_worker_logs.sh", "smoke-logs/"], env, checkout)
    assert fetch.returncode == 0, fetch.stderr
    context = {f"inputs.{name}": value for name, value in inputs.items()}
    context |= {"github.action_path": str(REPO), "runner.temp": env["RUNNER_TEMP"]}
    for number, action_step in enumerate(ACTION["runs"]["steps"]):
        assert action_step["shell"] == "bash"
        script = action_step["run"]
        if action_step["id"] == "install":
            script, replaced = re.subn(r'^(\s*)"\$VENV/bin/python" -m pip install .*"\$requirement"$',
                                       rf'\1ln -s {shlex.quote(str(INSTALLED))} "$VENV/bin/logscan"', script,
                                       flags=re.M)
            assert replaced == 1, "action.yml's install line changed: update this test's replacement"
            script = MAKE_VENV.sub("-m venv --without-pip ", script)
        path = tmp_path / f"action-{number}.sh"
        path.write_text(script)
        output = tmp_path / f"action-{number}-output"
        output.touch()
        step_env = {name: evaluate(value, context) for name, value in action_step.get("env", {}).items()}
        done = run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)],
                   {**env, **step_env, "GITHUB_OUTPUT": str(output)}, checkout)
        context |= {f"steps.{action_step['id']}.outputs.{key}": value for key, value in
                    (line.split("=", 1) for line in output.read_text().splitlines())}
        if action_step["id"] == "install":
            assert done.returncode == 0, done.stderr
            # logscan's own venv under $RUNNER_TEMP, the runner's python3 left as it was
            assert context["steps.install.outputs.logscan"].startswith(env["RUNNER_TEMP"])
    outputs = {name: evaluate(spec["value"], context) for name, spec in ACTION["outputs"].items()}
    assert done.returncode == 1 and outputs["exit-code"] == "1", done.stdout + done.stderr
    argv = (Path(step_env["ARGV_FILE"]).read_bytes()).split(b"\0")[:-1]
    assert argv[:2] == [b"smoke-logs/worker-0/launch_ddp.log", b"smoke-logs/worker-1/launch_ddp.log"]
    assert b"step [0-9]+/" in argv  # the quoted pattern is one argument
    assert any(a.startswith("::error ") for a in assert_annotations_open_files(done.stdout, checkout))
    assert "## ❌ logscan: FAILED" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert junit_failures(checkout / inputs["junit-output"]) >= 1
    assert assert_sarif_points_into(checkout / inputs["sarif-output"], checkout)


# --- GitLab CI -----------------------------------------------------------------------------------

def test_the_readmes_gitlab_job_gates_a_failed_smoke_run_and_leaves_its_reports(tmp_path):
    job = yaml.safe_load(one_block("## GitLab CI", "yaml").text)["smoke-gate"]
    assert re.fullmatch(r"python:3\.(1[1-9]|[2-9]\d)", job["image"])
    checkout = workspace(tmp_path, FAILED_SAMPLE)
    root = tmp_path / "root"
    (root / "tmp").mkdir(parents=True)
    script = tmp_path / "gitlab-script.sh"
    text, installs = installed_from_the_tests(relocated("\n".join(job["script"]), root))
    assert installs == 1
    script.write_text(text)
    env = {"PATH": runner_path(tmp_path), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
           "CI": "true", "GITLAB_CI": "true", "CI_PROJECT_DIR": str(checkout), "CI_JOB_NAME": "smoke-gate"}
    done = run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env, checkout)
    assert done.returncode == 1, done.stdout + done.stderr   # the job fails; artifacts: when: always
    assert "FAILED smoke-logs: crash-during-training" in done.stdout
    artifacts = job["artifacts"]
    assert artifacts["when"] == "always"
    for path in artifacts["paths"]:
        assert (checkout / path).exists(), path
    quality = json.loads((checkout / artifacts["reports"]["codequality"]).read_text())
    assert quality and {"description", "check_name", "fingerprint", "severity", "location"} <= set(quality[0])
    for issue in quality:  # GitLab opens location.path in the project
        assert (checkout / issue["location"]["path"]).is_file(), issue["location"]
    assert junit_failures(checkout / artifacts["reports"]["junit"]) >= 1


# --- Jenkins -------------------------------------------------------------------------------------

GROOVY_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "\\": "\\", "'": "'", '"': '"',
                  "$": "$", "\n": ""}


def groovy_single_quoted(body: str) -> str:
    """A '...' or '''...''' string as Groovy reads it: no interpolation, backslash escapes, and a
    backslash before a newline joins the lines."""
    def escape(match: re.Match) -> str:
        assert match[1] in GROOVY_ESCAPES, f"Groovy has no escape \\{match[1]}"
        return GROOVY_ESCAPES[match[1]]
    return re.sub(r"\\(.)", escape, body, flags=re.S)


def test_the_readmes_jenkins_stage_passes_a_healthy_smoke_run(tmp_path):
    stage = one_block("## Jenkins", "groovy").text
    steps = stage[stage.index("steps {"):stage.index("post {")]
    shell = [groovy_single_quoted(m[1] if m[1] is not None else m[2])
             for m in re.finditer(r"\bsh\s+(?:'''(.*?)'''|'((?:[^'\\\n]|\\.)*)')", steps, re.S)]
    assert len(shell) == len(re.findall(r"^\s*sh\b", steps, re.M)) == 3
    checkout = workspace(tmp_path, HEALTHY_SAMPLE)
    # Jenkins runs each `sh` as a script with `sh -xe`, in the workspace, WORKSPACE_TMP beside it.
    env = {"PATH": runner_path(tmp_path), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
           "JENKINS_URL": "http://jenkins.invalid/", "WORKSPACE": str(checkout),
           "WORKSPACE_TMP": f"{checkout}@tmp"}
    scripts = [installed_from_the_tests(body) for body in shell]
    assert sum(installs for _, installs in scripts) == 1
    for number, (body, _) in enumerate(scripts):
        path = tmp_path / f"jenkins-sh-{number}.sh"
        path.write_text(body)
        done = run(["sh", "-xe", str(path)], env, checkout)
        assert done.returncode == 0, (body, done.stdout, done.stderr)
    assert done.stdout.startswith("HEALTHY smoke-logs: 2 Worker(s), finished (30/30 steps)\n")
    assert "logscan: check passes: 3 expectation(s) held" in done.stderr
    post = stage[stage.index("post {"):]
    (junit,) = re.findall(r"junit testResults: '([^']+)', allowEmptyResults: false", post)
    assert junit_failures(checkout / junit) == 0
    (archived,) = re.findall(r"archiveArtifacts artifacts: '([^']+)'", post)
    assert archived.endswith("/**") and any(p.is_file() for p in (checkout / archived[:-3]).rglob("*"))


# --- the fleet sweep: cron, systemd, Kubernetes -------------------------------------------------

def fleet(outputs: Path) -> None:
    """The shared output directory: a user's two runs, one failed, one healthy (real samples)."""
    for run_dir, sample in (("alice/job-1", FAILED_SAMPLE), ("alice/job-2", HEALTHY_SAMPLE)):
        shutil.copytree(SAMPLES / sample, outputs / run_dir, ignore=shutil.ignore_patterns("expected.json"))


def sweep_paths(argv: list[str]) -> tuple[Path, Path]:
    """The swept DIR and the --prometheus FILE of a `logscan sweep` command line."""
    words = argv[argv.index("sweep") + 1:]
    return Path(words[0]), Path(words[words.index("--prometheus") + 1])


def assert_prometheus_counts(path: Path, failed: int, healthy: int) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(path.read_text()) for s in family.samples}
    assert samples[("logscan_sweep_jobs", (("verdict", "FAILED"),))] == failed
    assert samples[("logscan_sweep_jobs", (("verdict", "HEALTHY"),))] == healthy


def install_venv() -> str:
    """The virtual environment ## Install makes (`python3 -m venv ~/.venvs/logscan`)."""
    (venv,) = re.findall(r"python3 -m venv (\S+)", one_block("# Install", "sh", "python3 -m venv", INSTALL_PAGE).text)
    return venv


def test_the_readmes_cron_line_runs_under_crons_environment(tmp_path, webhook):
    block = one_block("## Cron", "crontab")
    lines = [line for line in block.text.splitlines() if line.strip() and not line.startswith("#")]
    # cron's own environment lines (NAME=value) come before the entry they are for
    settings = dict(line.split("=", 1) for line in lines if re.match(r"^[A-Z_]+=", line))
    (entry,) = [line for line in lines if not re.match(r"^[A-Z_]+=", line)]
    assert "://" not in entry, "a webhook's URL on the command line is seen by every user (ps)"
    schedule, command = entry.split(None, 5)[:5], entry.split(None, 5)[5]
    assert schedule == ["*/5", "*", "*", "*", "*"]
    assert "%" not in command  # cron would turn it into a newline
    if not shutil.which("flock", path="/usr/bin:/bin"):
        pytest.skip("no flock in /usr/bin or /bin (util-linux)")
    root = tmp_path / "root"
    command = relocated(command, root, webhook)
    outputs, prom = sweep_paths(shlex.split(command))
    fleet(outputs)
    (root / "tmp").mkdir()
    prom.parent.mkdir(parents=True)  # node_exporter's textfile directory
    # The user's crontab runs in the user's home, where ## Install made the venv.
    home = tmp_path / "home"
    venv_bin = Path(install_venv().replace("~", str(home), 1)) / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "logscan").symlink_to(INSTALLED)
    cron = {"HOME": str(home), "LOGNAME": "alice", "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin",
            **{name: relocated(value, root, webhook) for name, value in settings.items()}}
    tick = ["/bin/sh", "-c", command]

    first = run(tick, cron, home)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.startswith(f"failed: FAILED {outputs}/alice/job-1: crash-during-training")  # mailed
    assert [post["job_id"] for post in webhook.posts] == [f"{outputs}/alice/job-1"]
    assert_prometheus_counts(prom, failed=1, healthy=1)
    second = run(tick, cron, home)
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")  # nothing new: no mail
    assert len(webhook.posts) == 1
    # A tick while the last sweep still runs is skipped, silently.
    lock = re.search(r"flock -n (\S+)", command)[1]
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        skipped = run(tick, cron, home)
    assert (skipped.returncode, skipped.stdout, skipped.stderr) == (1, "", "")


def systemd_units() -> dict[str, str]:
    """The unit files of ## systemd, by the file name the paragraph before each gives."""
    units = {}
    for block in examples("## systemd"):
        if block.language == "ini" and "/etc/systemd/system/" in block.caption:
            (name,) = re.findall(r"`/etc/systemd/system/([\w.@-]+)`:\s*$", block.caption)
            units[name] = block.text
    assert set(units) == {"logscan-sweep.service", "logscan-sweep.timer"}
    return units


def unit_settings(text: str) -> dict[str, dict[str, list[str]]]:
    """Sections of a unit file, each setting with its values in order; a trailing backslash joins lines."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
        else:
            key, value = line.split("=", 1)
            current.setdefault(key, []).append(value)
    return sections


def test_the_readmes_systemd_service_runs_its_sweep_into_its_state_directory(tmp_path, webhook):
    root = tmp_path / "root"
    units = {name: relocated(text, root, webhook) for name, text in systemd_units().items()}
    service = unit_settings(units["logscan-sweep.service"])["Service"]
    (exec_start,) = service["ExecStart"]
    assert not re.search(r"[$%]", exec_start), "systemd would expand it: $VAR and %-specifiers"
    argv = shlex.split(exec_start)
    outputs, prom = sweep_paths(argv)
    fleet(outputs)
    prom.parent.mkdir(parents=True)
    # The unit's binary is the command of the venv the section installs into, linked here to the
    # tested package (the install's pip line is the one replaced).
    (venv,) = re.findall(r"python3 -m venv (/\S+)", examples("## systemd")[0].caption)
    binary = Path(argv[0])
    assert binary == Path(relocated(venv, root)) / "bin" / "logscan", (argv[0], venv)
    binary.parent.mkdir(parents=True)
    binary.symlink_to(INSTALLED)
    environment = dict(assignment.split("=", 1) for value in service.get("Environment", [])
                       for assignment in shlex.split(value))
    assert "://" not in exec_start, "a webhook's URL on the command line is seen by every user (ps)"
    for path in service.get("EnvironmentFile", []):  # each shown in its own block, by its path
        (shown,) = [b for b in examples("## systemd") if b.language == "env" and f"`{path}`" in b.caption]
        environment.update(line.split("=", 1) for line in relocated(shown.text, root, webhook).splitlines()
                           if line.strip() and not line.startswith("#"))
    (state_directory,) = service["StateDirectory"]
    state = root / "var" / "lib" / state_directory  # systemd makes it, owned by User=, before it starts
    state.mkdir(parents=True)
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
           "HOME": str(tmp_path / "home-of-user-logscan"), "STATE_DIRECTORY": str(state), **environment}
    done = run(argv, env, Path("/"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"failed: FAILED {outputs}/alice/job-1" in done.stdout  # the journal's line
    assert len(list(state.glob("logscan/sweeps/*.sqlite3")) + list(state.glob("sweeps/*.sqlite3"))) == 1
    assert [post["job_id"] for post in webhook.posts] == [f"{outputs}/alice/job-1"]
    assert_prometheus_counts(prom, failed=1, healthy=1)
    if shutil.which("systemd-analyze"):  # systemd's own reading of both units
        for name, text in units.items():
            (tmp_path / "units" / name).parent.mkdir(exist_ok=True)
            (tmp_path / "units" / name).write_text(text)
        verify = run(["systemd-analyze", "verify", "--man=no", *(str(tmp_path / "units" / name) for name in units)],
                     {"PATH": "/usr/bin:/bin", "SYSTEMD_LOG_COLOR": "0"}, tmp_path)
        assert (verify.returncode, verify.stderr) == (0, ""), verify.stderr


def test_the_readmes_kubernetes_cronjob_pods_run_their_command_and_keep_state_on_the_volume(
        tmp_path, webhook):
    manifest = yaml.safe_load(one_block("## Kubernetes", "yaml").text)
    job = manifest["spec"]["jobTemplate"]["spec"]
    pod = job["template"]["spec"]
    (container,) = pod["containers"]
    argv = [*container.get("command", []), *container.get("args", [])]
    # Kubernetes expands only $(VAR) of the container's env; no shell sees the words.
    assert not any("$" in word for word in argv), argv
    claims = {v["name"]: tmp_path / "volumes" / v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
    mounts = {m["mountPath"]: claims[m["name"]] for m in container["volumeMounts"]}

    def in_pod(value: str) -> str:
        for mount_path, volume in mounts.items():
            if value == mount_path or value.startswith(mount_path + "/"):
                return str(volume) + value[len(mount_path):]
        return SLACK_WEBHOOK.sub(webhook.url, value)

    argv = [in_pod(word) for word in argv]
    fleet(Path(argv[argv.index("sweep") + 1]))
    for volume in mounts.values():
        volume.mkdir(parents=True, exist_ok=True)
    image_bin = tmp_path / "image-bin"  # the image: ddp-logscan installed, logscan on its PATH
    image_bin.mkdir()
    (image_bin / "logscan").symlink_to(INSTALLED)
    assert not any("://" in word for word in argv), "a webhook's URL in a pod's command is seen in its spec"
    # A value from a Secret is the URL the cluster holds: the test's server.
    container_env = {e["name"]: in_pod(e["value"]) if "value" in e else webhook.url
                     for e in container.get("env", []) if "value" in e or "secretKeyRef" in e.get("valueFrom", {})}

    def run_pods(attempt: str, indexes: list[int]) -> dict[int, subprocess.CompletedProcess]:
        """Pods of one CronJob run, together, each on a fresh disk of its own."""
        pods = {}
        for index in indexes:
            disk = tmp_path / "pod-disks" / attempt / str(index)
            disk.mkdir(parents=True)
            env = {"PATH": f"{image_bin}:/usr/bin:/bin", "HOME": str(disk), "HOSTNAME": f"logscan-sweep-{index}",
                   **container_env, "JOB_COMPLETION_INDEX": str(index)}
            pods[index] = subprocess.Popen(argv, env=env, cwd=disk, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True)
        finished = {index: (p, *p.communicate(timeout=120)) for index, p in pods.items()}
        return {index: subprocess.CompletedProcess(p.args, p.returncode, out, err)
                for index, (p, out, err) in finished.items()}

    assert job["completionMode"] == "Indexed" and job["parallelism"] == job["completions"]
    assert pod["restartPolicy"] == "Never" and manifest["spec"]["concurrencyPolicy"] == "Forbid"
    first = run_pods("first", list(range(job["completions"])))
    assert [p.returncode for p in first.values()] == [0] * job["completions"], [p.stderr for p in first.values()]
    (told,) = [index for index, p in first.items() if p.stdout]  # one shard holds the failed job
    assert first[told].stdout.startswith("failed: FAILED ") and "alice/job-1: " in first[told].stdout
    assert len(webhook.posts) == 1 and webhook.posts[0]["job_id"].endswith("alice/job-1")
    state_home = Path(container_env["XDG_STATE_HOME"])
    assert len(list(state_home.rglob("*.sqlite3"))) == job["completions"]  # one state per shard, on the volume
    # The next run's pod starts on a fresh disk: the state on the volume says nothing is new.
    (again,) = run_pods("second", [told]).values()
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert len(webhook.posts) == 1
