"""`logscan lint`: the guide's own launch script and command lint clean; each lint rule fires on a
script written for these tests (tests/lint_cases/, each saying so) and stays quiet on the guide."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from logscan.catalogue import load_catalogue
from logscan.lint import SCRIPT_RULES, lint_rules
from logscan.lint import rule_ids as ids

REPO = Path(__file__).resolve().parent.parent
GENERATE = REPO / "sample_logs" / "generate"
CASES = Path(__file__).resolve().parent / "lint_cases"
CATALOGUE = load_catalogue()


def _generate_constants() -> dict[str, str]:
    """The launch commands generate.py runs the samples with (its module-level strings)."""
    tree = ast.parse((GENERATE / "generate.py").read_text())
    return {node.targets[0].id: node.value.value for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


CMDS = _generate_constants()
GUIDE_CMD = CMDS["GUIDE_CMD"]
GUIDE_SCRIPT = str(GENERATE / "launch_ddp.sh")


def lint_json(run_cli, *args) -> tuple[int, dict]:
    """The exit status, checked against the findings (1 on an error finding, --fail-on error
    being the default), and the report."""
    result = run_cli("lint", "--isolated", "--format", "json", *args)
    assert result.stdout.startswith("{"), result.output  # a report, not a usage error
    report = json.loads(result.stdout)
    errors = any(f["severity"] == "error" for f in report["findings"])
    if "--fail-on" not in args:
        assert result.exit_code == (1 if errors else 0), result.output
    return result.exit_code, report


def rules_fired(report: dict) -> set[str]:
    return {f["rule"] for f in report["findings"]}


def case(name: str) -> str:
    return str(CASES / name)


def test_the_guides_script_and_command_lint_clean(run_cli):
    status, report = lint_json(run_cli, GUIDE_SCRIPT, "--command", GUIDE_CMD,
                               "--train-script", case("train_guide.py"),
                               "--train-script", str(GENERATE / "train.py"))
    assert status == 0 and report["findings"] == [], report["findings"]
    assert report["verdict"] == "HEALTHY"
    status, _ = lint_json(run_cli, GUIDE_SCRIPT, "--command", GUIDE_CMD, "--fail-on", "warning")
    assert status == 0


@pytest.mark.parametrize("script", ["launch_ddp_c10d.sh", "launch_ddp_quiet.sh", "launch_ddp_legacy.sh"])
def test_the_samples_launch_variants_lint_clean(run_cli, script):
    status, report = lint_json(run_cli, str(GENERATE / script), "--command", GUIDE_CMD)
    assert status == 0 and report["findings"] == [], report["findings"]


@pytest.mark.parametrize("name", ["STAMPED_CMD", "LOG_DIR_CMD", "APPEND_CMD"])
def test_the_samples_commands_that_keep_the_status_lint_clean(run_cli, name):
    status, report = lint_json(run_cli, "--command", CMDS[name])
    assert status == 0 and report["findings"] == [], report["findings"]


def line_of(path: Path, text: str) -> int:
    """The number of the first line of `path` that holds `text` (the script changes with its samples)."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# (rule, lint arguments, file:line the first finding of that rule must cite)
FIRES = [
    (ids.WORLD_SIZE_MISUSED, [case("world_size_export.sh")], "world_size_export.sh:10"),
    (ids.WORLD_SIZE_MISUSED, [case("world_size_prefix.sh")], "world_size_prefix.sh:5"),
    (ids.WORLD_SIZE_MISUSED, [case("nproc_from_world_size.sh")], "nproc_from_world_size.sh:17"),
    (ids.WORLD_SIZE_MISUSED, ["--command-file", case("cmd_export_world_size.cmd")], "cmd_export_world_size.cmd:4"),
    (ids.WORLD_SIZE_MISUSED, ["--train-script", case("train_sets_world_size.py")], "train_sets_world_size.py:5"),
    (ids.WORLD_SIZE_MISUSED, [GUIDE_SCRIPT, "--command", CMDS["NNODES_EXPORT_CMD"],
                              "--train-script", str(GENERATE / "train_entry.py")], "train_entry.py:9"),
    (ids.ARG_NOT_FROM_PLATFORM, [case("hardcoded_args.sh")], "hardcoded_args.sh:18"),
    (ids.ARG_NOT_FROM_PLATFORM, [case("unset_var.sh")], "unset_var.sh:17"),
    (ids.ARG_NOT_FROM_PLATFORM, [case("missing_args.sh")], "missing_args.sh:15"),
    (ids.ARG_NOT_FROM_PLATFORM, [case("nnodes_from_command.sh")], "nnodes_from_command.sh:16"),
    (ids.PLATFORM_VAR_UNGUARDED, [case("unguarded.sh")], "unguarded.sh:18"),
    (ids.MISSING_STRICT_MODE, [case("no_strict_mode.sh")], "no_strict_mode.sh:1"),
    (ids.MISSING_STRICT_MODE, [case("partial_strict_mode.sh")], "partial_strict_mode.sh:4"),
    (ids.MISSING_STRICT_MODE, ["--command", CMDS["PIPE_TEE_CMD"]], "<launch command>:1"),
    (ids.EXIT_STATUS_MASKED, ["--command", CMDS["PIPE_TEE_CMD"]], "<launch command>:2"),
    (ids.EXIT_STATUS_MASKED, ["--command", CMDS["PLAIN_TEE_CMD"]], "<launch command>:2"),
    (ids.EXIT_STATUS_MASKED, ["--command", CMDS["UPLOAD_SLEEP_CMD"]], "<launch command>:3"),
    (ids.EXIT_STATUS_MASKED, ["--command-file", case("cmd_or_true.cmd")], "cmd_or_true.cmd:5"),
    (ids.EXIT_STATUS_MASKED, ["--command-file", case("cmd_exit_zero.cmd")], "cmd_exit_zero.cmd:5"),
    (ids.EXIT_STATUS_MASKED, [case("script_pipe_tee.sh")], "script_pipe_tee.sh:22"),
    (ids.NPROC_EXCEEDS_GPUS, [case("nproc_total.sh")], "nproc_total.sh:16"),
    (ids.NPROC_EXCEEDS_GPUS, [case("nproc_sixteen.sh")], "nproc_sixteen.sh:16"),
    (ids.GPU_COUNT_NOT_FROM_NODE, [case("gpu_fixed.sh")], "gpu_fixed.sh:16"),
    (ids.GPU_COUNT_NOT_FROM_NODE, [case("gpu_per_worker.sh")], "gpu_per_worker.sh:16"),
    (ids.LOCAL_RANK_ARGPARSE, ["--train-script", case("train_local_rank.py")], "train_local_rank.py:9"),
    # The real local-rank-argparse sample: the legacy launcher passes --local-rank=N to train.py.
    (ids.LOCAL_RANK_ARGPARSE, [str(GENERATE / "launch_ddp_legacy.sh"), "--train-script",
                               str(GENERATE / "train.py")],
     "train.py:%d" % line_of(GENERATE / "train.py", 'parser.add_argument("--local_rank"')),
]

# (rule, lint arguments): the rule must stay quiet.
QUIET = [
    (ids.WORLD_SIZE_MISUSED, [case("world_size_in_comments.sh")]),
    (ids.WORLD_SIZE_MISUSED, [GUIDE_SCRIPT, "--command-file", case("cmd_sets_nnodes.cmd")]),
    (ids.ARG_NOT_FROM_PLATFORM, [case("nnodes_from_command.sh"), "--command-file", case("cmd_sets_nnodes.cmd")]),
    (ids.MISSING_STRICT_MODE, [case("long_strict_mode.sh")]),
    (ids.EXIT_STATUS_MASKED, ["--command-file", case("cmd_status_kept.cmd")]),
    (ids.EXIT_STATUS_MASKED, ["--command-file", case("cmd_pipestatus.cmd")]),
    (ids.NPROC_EXCEEDS_GPUS, [case("gpu_auto.sh")]),
    (ids.GPU_COUNT_NOT_FROM_NODE, [case("gpu_auto.sh")]),
    (ids.GPU_COUNT_NOT_FROM_NODE, [case("nproc_from_world_size.sh")]),  # said once, by its own rule
    (ids.LOCAL_RANK_ARGPARSE, ["--train-script", case("train_both_spellings.py")]),
    (ids.LOCAL_RANK_ARGPARSE, ["--train-script", str(GENERATE / "train.py"), GUIDE_SCRIPT]),
]


@pytest.mark.parametrize("rule, args, where", FIRES, ids=lambda v: v if isinstance(v, str) and ":" in v else None)
def test_rule_fires_with_path_line_evidence(run_cli, rule, args, where):
    status, report = lint_json(run_cli, *args)
    mine = [f for f in report["findings"] if f["rule"] == rule]
    assert mine, f"{rule} did not fire: {rules_fired(report)}"
    cited = [f"{Path(e['file']).name if e['file'] != '<launch command>' else e['file']}:{e['line']}"
             for f in mine for e in f["evidence"]]
    assert where in cited, cited
    assert all(f["hint"] and f["message"] for f in mine)
    assert status == (1 if any(f["severity"] == "error" for f in report["findings"]) else 0)


@pytest.mark.parametrize("rule, args", QUIET)
def test_rule_stays_quiet(run_cli, rule, args):
    _, report = lint_json(run_cli, *args)
    assert rule not in rules_fired(report), report["findings"]


def test_every_lint_rule_has_a_firing_and_a_quiet_case():
    assert {rule for rule, _, _ in FIRES} == set(SCRIPT_RULES)
    # The guide itself is every rule's quiet case (test_the_guides_script_and_command_lint_clean).


def test_catalogue_code_and_ids_agree():
    named = {v for k, v in vars(ids).items() if k.isupper()}
    assert set(lint_rules(CATALOGUE)) == set(SCRIPT_RULES) == named
    for rule in lint_rules(CATALOGUE).values():
        assert Path(rule.source).name == f"{rule.id}.toml" and rule.id.startswith("lint-")


def test_lint_rules_are_listed_and_explained(run_cli):
    listed = run_cli("rules", "--isolated")
    assert listed.exit_code == 0, listed.output
    for rule_id in SCRIPT_RULES:
        assert rule_id in listed.output
    explained = run_cli("rules", "explain", ids.EXIT_STATUS_MASKED)
    assert explained.exit_code == 0, explained.output
    assert "(lint, error, stage launch)" in explained.output and "## How to fix" in explained.output


def test_human_report_names_the_line_and_the_hint(run_cli):
    result = run_cli("lint", "--isolated", case("hardcoded_args.sh"))
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"lint {case('hardcoded_args.sh')}: 2 problems (2 errors): "
                                    f"{ids.ARG_NOT_FROM_PLATFORM}: ")
    assert "hardcoded_args.sh:18" in result.output and "hint: " in result.output


@pytest.mark.parametrize("script, summary", [
    (GUIDE_SCRIPT, "sh: no problems found"),
    (case("no_strict_mode.sh"), f"sh: 1 problem (1 warning): {ids.MISSING_STRICT_MODE}: "),
])
def test_a_lint_report_speaks_of_the_scripts_not_of_a_job(run_cli, script, summary):
    """No Workers table, no HEALTHY, no root cause: lint read scripts; it saw no job run."""
    for fmt in ("human", "markdown", "github"):
        result = run_cli("lint", "--isolated", "--format", fmt, script)
        assert result.exit_code == 0, result.output
        assert summary in result.output, result.output
        for word in ("Workers", "HEALTHY", "root cause", "node  host"):
            assert word not in result.output, (fmt, word)
    for fmt in ("human", "markdown", "github"):  # errors found: still no root cause of a job
        result = run_cli("lint", "--isolated", "--format", fmt, case("hardcoded_args.sh"))
        assert result.exit_code == 1 and "2 problems (2 errors)" in result.output, result.output
        assert "root cause" not in result.output and "Workers" not in result.output, fmt
    _, report = lint_json(run_cli, case("hardcoded_args.sh"))
    assert report["root_cause"] is None and report["workers"] == [] and report["verdict"] == "FAILED"


def test_exit_statuses_follow_fail_on(run_cli):
    warning_only = case("gpu_fixed.sh")
    assert run_cli("lint", "--isolated", warning_only).exit_code == 0
    assert run_cli("lint", "--isolated", warning_only, "--fail-on", "warning").exit_code == 1
    assert run_cli("lint", "--isolated", case("hardcoded_args.sh"), "--fail-on", "never").exit_code == 0
    ignored = run_cli("lint", "--isolated", case("hardcoded_args.sh"), "--ignore", ids.ARG_NOT_FROM_PLATFORM)
    assert ignored.exit_code == 0, ignored.output


@pytest.mark.parametrize("args, says", [
    ([], "nothing to lint"),
    (["no/such/launch_ddp.sh"], "cannot read no/such/launch_ddp.sh"),
    (["--command", "bash x.sh > >(tee log"], "<launch command>:1: cannot parse"),
    (["--train-script", str(CASES / "world_size_export.sh")], "cannot parse this Python script"),
    ([GUIDE_SCRIPT, "--select", "missing-worker"], "unknown lint rule id 'missing-worker'"),
    ([GUIDE_SCRIPT, "--format", "yaml"], "--format"),
])
def test_usage_and_input_errors_exit_2_in_one_line(run_cli, args, says):
    result = run_cli("lint", "--isolated", *args)
    assert result.exit_code == 2, result.output
    assert says in result.output and len(result.output.strip().splitlines()) == 1, result.output
