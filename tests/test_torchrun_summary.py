"""torchrun's failure report, as each release prints it: one failed process is one failure, however
many of its lines tell of it.

The lines are built from torch's format strings (elastic/multiprocessing/api.py's `failed
(exitcode: N) local_rank: L (pid: P) of binary: B`, errors/__init__.py's summary table, as
tests/torch_source/formats.toml records them per release).
"""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, torch_source_entries


def report(code: int, pid_suffix: str) -> list[str]:
    return [
        "E1129 18:47:52.096000 4351 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
        f"(exitcode: {code}) local_rank: 1 (pid: 4356) of binary: /usr/bin/python3",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-29_17:58:31",
        "  host      : job-7f3a-worker-1",
        "  rank      : 3 (local_rank: 1)",
        f"  exitcode  : {code} (pid: 4356){pid_suffix}",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "============================================================",
    ]


@pytest.mark.parametrize("code, pid_suffix", [(1, " "), (-11, "  (SIGSEGV)")])
def test_the_failed_line_and_the_summary_row_are_one_process(run_cli, tmp_path, code, pid_suffix):
    """torch 2.12+ prints `(pid: P) ` (a trailing space) for a positive code and `(pid: P)  (SIGX)`
    for a signal; both lines name local rank 1, the row also its global rank 3."""
    log = tmp_path / "excerpt.log"
    log.write_text("\n".join(report(code, pid_suffix)) + "\n")
    result = run_cli("scan", log, "--format", "json", "--now", POST_MORTEM_NOW)
    root = json.loads(result.stdout)["root_cause"]
    assert root["rank"] == 3
    assert "rank 3 " in root["message"] and "2 processes" not in root["message"]


@pytest.mark.parametrize("era, summary", [(entry["id"], text) for entry in torch_source_entries()
                                          for text in entry["examples"] if "traceback : Traceback" in text])
def test_the_exception_an_error_file_quotes_in_the_summary_is_read(run_cli, tmp_path, era, summary):
    """When the process's own stderr is not in the log, the summary's quoted traceback (indented
    two spaces more than Python prints it) still names the exception and the rank."""
    log = tmp_path / "excerpt.log"
    log.write_text(summary + "\n")
    report = json.loads(run_cli("scan", log, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    root = report["root_cause"]
    assert "RuntimeError: CUDA error: an illegal memory access" in root["message"], root
    assert root["rank"] is not None


@pytest.mark.parametrize("summary", [text for entry in torch_source_entries()
                                     if entry["id"] == "summary-old" for text in entry["examples"]])
def test_torch_1_9s_table_gives_its_rank_and_exit(run_cli, tmp_path, summary):
    """torch 1.9's ChildFailedError table (`Root Cause:` first, unpadded fields, `msg: "..."`):
    the failed process's rank and exit are read as from later releases' tables."""
    log = tmp_path / "excerpt.log"
    log.write_text(summary + "\n")
    import re

    report = json.loads(run_cli("scan", log, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    rank = int(re.search(r"rank: (\d+) \(local_rank", summary)[1])
    assert report["verdict"] == "FAILED" and report["root_cause"]["rank"] == rank


@pytest.mark.parametrize("rows", [
    ["Root Cause (first observed failure):", "[0]:", "  time      : 2025-04-16_00:06:43",
     "  host      : 494f2fcc8a8d", "  rank      : 0 (local_rank: 0)", "  exi"],
    # torch 1.9's unpadded rows, the log ending at the rank row
    ["Root Cause:", "[0]:", "  time: 2021-08-01_10:00:00", "  rank: 0 (local_rank: 0)"],
])
def test_a_root_cause_entry_cut_before_its_exitcode_still_names_the_first_failure(run_cli, tmp_path, rows):
    """errors/__init__.py's _FAILURE_FORMAT_TEMPLATE rows (both eras), a paste ending inside the Root Cause
    entry; a later-listed failure with its code comes before it in the report (synthetic rows)."""
    import json
    from conftest import POST_MORTEM_NOW
    failures = ["Failures:", "[1]:", "  time      : 2025-04-16_00:06:43", "  host      : 494f2fcc8a8d",
                "  rank      : 1 (local_rank: 1)", "  exitcode  : -7 (pid: 100)", "  error_file: <N/A>",
                "  traceback : Signal 7 (SIGBUS) received by PID 100", "-" * 40]
    (tmp_path / "paste.log").write_text("\n".join(failures + rows) + "\n")
    report = json.loads(run_cli("scan", tmp_path / "paste.log", "--isolated", "--format", "json",
                                "--now", POST_MORTEM_NOW).stdout)
    assert report["root_cause"]["rank"] == 0
    assert "cut off before the exit code" in report["root_cause"]["message"]


OTHER_FAILURE = ["[1]:", "  time      : 2023-04-25_13:29:47", "  host      : node-a", "  rank      : 1 (local_rank: 1)",
                 "  exitcode  : 1 (pid: 227062)", "  error_file: <N/A>",
                 "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]


@pytest.mark.parametrize("cut_at", [["[2]:", "  time      : 2023-04-25_13:29:47", "  ho"], ["-" * 40]])
def test_a_report_cut_among_its_other_failures_names_none_of_them_first(run_cli, tmp_path, cut_at):
    """errors/__init__.py's _MSG_FORMAT_TEMPLATE (1.10 on) lists `Failures:` (the others) before `Root Cause
    (first observed failure):`: a paste ending before that entry shows which process failed first nowhere,
    and the ones it lists followed it (synthetic rows)."""
    from conftest import paste_report
    report = paste_report(run_cli, tmp_path, "\n".join(["Failures:", *OTHER_FAILURE, *cut_at]) + "\n")
    root = report["root_cause"]
    assert report["verdict"] == "FAILED" and root["rank"] is None
    # told as the report's missing entry, cited at the heading of the failures it lists first
    assert "the Root Cause entry after the other failures it lists, is cut off" in root["message"]
    assert root["evidence"][0]["text"] == "Failures:"
    assert "rank 1 then failed with exit code 1" in json.dumps(report["findings"])


def test_torch_1_9s_other_failures_come_after_its_root_cause(run_cli, tmp_path):
    """1.9's table puts `Root Cause:` first and `Other Failures:` after: a paste cut among them has its root."""
    from conftest import paste_report
    rows = ["Root Cause:", "[0]:", "  time: 2021-08-01_10:00:00", "  rank: 0 (local_rank: 0)",
            "  exitcode: 1 (pid: 100)", "Other Failures:", "[1]:", "  time: 2021-08-01_10:00:00",
            "  rank: 1 (local_rank: 1)", "  exitcode: 1 (pid: 101)", "[2]:", "  ti"]
    report = paste_report(run_cli, tmp_path, "\n".join(rows) + "\n")
    assert report["root_cause"]["rank"] == 0


@pytest.mark.parametrize("code, words", [(1, "failed with exit code 1"), (-9, "killed by SIGKILL")])
def test_torch_1_9s_warning_of_a_child_without_an_error_file_is_its_exit(run_cli, tmp_path, code, words):
    """errors/__init__.py's _no_error_file_warning_msg (1.9): `Child process {pid} (local_rank {rank}) FAILED
    (exitcode {exitcode})`, its rank the global one (ChildFailedError.failures' key); the summary table
    after it cut away (synthetic lines)."""
    from conftest import paste_report
    lines = ["**********************************************************************",
             "               CHILD PROCESS FAILED WITH NO ERROR_FILE                ",
             "**********************************************************************",
             "CHILD PROCESS FAILED WITH NO ERROR_FILE",
             f"Child process 2814 (local_rank 3) FAILED (exitcode {code})",
             f"Error msg: Process failed with exitcode {code}"]
    root = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")["root_cause"]
    assert root["rank"] == 3 and words in root["message"]


@pytest.mark.parametrize("cut", [["[0]:", "  time      : 2022-11-29_17:14:20", "  host      : GPU236", "  rank"],
                                 ["[0]:", "  time      : 2022-11-29_17:14:20"]])
def test_a_root_cause_entry_cut_before_its_rank_names_no_process_first(run_cli, tmp_path, cut):
    """The other failures listed whole, the Root Cause entry cut before its rank row (synthetic rows of
    _MSG_FORMAT_TEMPLATE): the first failure is told, its process is not, and the others followed it."""
    from conftest import paste_report
    text = "\n".join(["Failures:", *OTHER_FAILURE, "-" * 60, "Root Cause (first observed failure):", *cut]) + "\n"
    report = paste_report(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED" and report["root_cause"]["rank"] is None
    assert "rank 1 then failed with exit code 1" in json.dumps(report["findings"])


def test_the_same_report_printed_again_and_cut_is_no_second_failure(run_cli, tmp_path):
    """Two launchers' outputs in one log print one ChildFailedError report twice; the second, cut inside its
    Root Cause entry with the first's time and host, is that report again (synthetic rows)."""
    from conftest import paste_report
    entry = ["Root Cause (first observed failure):", "[0]:", "  time      : 2024-07-24_11:39:43",
             "  host      : node-a"]
    whole = ["Failures:", "  <NO_OTHER_FAILURES>", "-" * 60, *entry, "  rank      : 0 (local_rank: 0)",
             "  exitcode  : 1 (pid: 2870757)", "  error_file: <N/A>", "=" * 60]
    # (the second copy cut inside its host row)
    report = paste_report(run_cli, tmp_path, "\n".join([*whole, "Failures:", "  <NO_OTHER_FAILURES>", "-" * 60,
                                                         *entry[:-1], "  host      : node-"]) + "\n")
    assert report["root_cause"]["rank"] == 0
    assert len([f for f in report["findings"] if f["severity"] == "error"]) == 1
