"""`logscan check PATH... [expectations]`: scan, plus what the smoke run must show; a CI gate.

Each expectation is a finding like any other (own id, evidence, hint). With no expectations the
gate still fails when the logs show nothing to judge (verdict INCONCLUSIVE). Paths in every
format are as the user gave them; reports for CI systems can go to several files at once.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from logscan.cli.exit_codes import EXIT_FINDINGS, EXIT_HEALTHY, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from logscan.cli.common import (Color, ConfigFile, FailOnOption, Ignore, Isolated, Jobs,
                                JobStatusOption, Now, Output, ProgressPatterns, RuleDirs, Select,
                                StallAfter, diagnose_or_fail, exit_status, load_settings, say,
                                use_color)
from logscan.cli.outputs import (ConciseOutput, FormatOption, GithubOutput, GitlabOutput,
                                HumanOutput, JsonOutput, JunitOutput, MarkdownOutput, SarifOutput,
                                report_files, under_github_actions, write_reports)
from logscan.vocabulary import Verdict

CHECK_EXIT_HELP = f"""\b
Exit status:
  {EXIT_HEALTHY}    every expectation holds, the verdict is HEALTHY or RUNNING, and no finding
       reaches --fail-on (default: error)
  {EXIT_FINDINGS}    otherwise: an expectation not met, a FAILED job, logs that show nothing to
       judge (INCONCLUSIVE), or findings at or above --fail-on
  {EXIT_USAGE}    usage, config or input error (one line on stderr)
  {EXIT_INTERNAL}    internal error in logscan (one line on stderr; please report it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C)

\b
--format defaults to github when GitHub Actions runs the step and standard output is not a
terminal (annotations, and the Markdown report appended to $GITHUB_STEP_SUMMARY)."""


def register(app: typer.Typer) -> None:
    app.command("check", epilog=CHECK_EXIT_HELP)(check)


def check(
    paths: Annotated[list[str], typer.Argument(help="Log files or directories of ONE job.")],
    expect_workers: Annotated[Optional[int], typer.Option(
        "--expect-workers", metavar="N", help="The logs show N Workers (launch lines, nnodes=N).")] = None,
    expect_gpus_per_node: Annotated[Optional[int], typer.Option(
        "--expect-gpus-per-node", metavar="G", help="Every launch line says gpus_per_node=G.")] = None,
    expect_world_size: Annotated[Optional[int], typer.Option(
        "--expect-world-size", metavar="W", help="W processes in all, each printed WORLD_SIZE=W.")] = None,
    expect_first_batch: Annotated[Optional[bool], typer.Option(
        "--expect-first-batch", help="Every Worker (so every rank) got past its first batch.")] = None,
    expect_finished: Annotated[Optional[bool], typer.Option(
        "--expect-finished", help="The run ended normally: progress at its total, or an end line.")] = None,
    max_time_to_first_batch: Annotated[Optional[str], typer.Option(
        "--max-time-to-first-batch", metavar="DURATION",
        help="Each Worker's first batch within DURATION of its launch line (needs timestamps).")] = None,
    max_warnings: Annotated[Optional[int], typer.Option(
        "--max-warnings", metavar="N", help="At most N warning findings.")] = None,
    format: FormatOption = None,
    output: Output = None,
    human_output: HumanOutput = None,
    json_output: JsonOutput = None,
    concise_output: ConciseOutput = None,
    github_output: GithubOutput = None,
    gitlab_output: GitlabOutput = None,
    junit_output: JunitOutput = None,
    sarif_output: SarifOutput = None,
    markdown_output: MarkdownOutput = None,
    fail_on: FailOnOption = None,
    rules: RuleDirs = [],
    select: Select = [],
    ignore: Ignore = [],
    progress_pattern: ProgressPatterns = [],
    job_status: JobStatusOption = None,
    now: Now = None,
    stall_after: StallAfter = None,
    jobs: Jobs = 0,
    color: Color = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
) -> None:
    """Gate a CI pipeline on a smoke run's logs: scan them and hold them to expectations."""
    settings = load_settings(dict(
        rule_dirs=rules, select=select, ignore=ignore, progress_patterns=progress_pattern,
        job_status=job_status, now=now, stall_after=stall_after, processes=jobs, format=format,
        default_format="github" if under_github_actions() else None,
        fail_on=fail_on, output=output,
        reports=report_files(human=human_output, json=json_output, concise=concise_output,
                             github=github_output, gitlab=gitlab_output, junit=junit_output,
                             sarif=sarif_output, markdown=markdown_output),
        expect_workers=expect_workers, expect_gpus_per_node=expect_gpus_per_node,
        expect_world_size=expect_world_size, expect_first_batch=expect_first_batch,
        expect_finished=expect_finished, expect_max_time_to_first_batch=max_time_to_first_batch,
        expect_max_warnings=max_warnings), config, isolated)
    diagnosis, catalogue = diagnose_or_fail(paths, settings)
    write_reports(diagnosis, settings, catalogue, list(paths), color=use_color(color, settings))
    status = exit_status(diagnosis, settings.fail_on)
    if status != EXIT_HEALTHY and diagnosis.verdict == Verdict.INCONCLUSIVE:
        say(f"logscan: check fails: the logs show nothing to judge: {diagnosis.verdict_reason}")
    raise typer.Exit(status)
