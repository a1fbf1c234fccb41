"""Known-harmless lines are named: a paste of warnings torch prints that do not mean failure ends
with each of them named once (what it means, where it first is, how many lines), says that no line
shows a failure, and is never FAILED nor HEALTHY on their word; mixed into a real failure, they
change nothing of what is found.

The pastes are SYNTHETIC, built from the format strings in torch's source that each entry of
rules/harmless/ names in its comments (Utils.hpp getCvar*, reducer.cpp, ProcessGroupNCCL.cpp
barrier and destructor, distributed_c10d.py barrier, socket.cpp, TCPStoreLibUvBackend.cpp; NCCL's
ibvwrap.cc; aws-ofi-nccl's platform-aws.c), with
the C++ logger's headers of their eras (tests/torch_source/formats.toml, entry cpp-prefix); the
entries' own fire/quiet lines are checked here too. The failure mixed in is the NCCL error line of
tests/torch_source/formats.toml (family exceptions).
"""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.catalogue import load_catalogue
from logscan.scan.prefixes import strip_prefixes

CATALOGUE = load_catalogue()
ENTRIES = sorted(CATALOGUE.harmless.values(), key=lambda e: e.id)

# One line of each family, in the order a run prints them.
PASTE = {
    "torchrun-start-banner": "W1129 18:48:38.105000 4715 torch/distributed/run.py:803] Setting OMP_NUM_THREADS "
                             "environment variable for each process to be 1 in default, to avoid your system being "
                             "overloaded, please further tune the variable for optimal performance in your "
                             "application as needed.",
    "ipv6-probe": "[W1129 18:48:39.104412345 socket.cpp:755] [c10d] The IPv6 network addresses of (job-7f3a-worker-0, "
                  "29500) cannot be retrieved (gai error: -9 - Address family for hostname not supported).",
    "client-hostname-unknown": "[W1129 18:48:39.458368607 socket.cpp:207] [c10d] The hostname of the client socket "
                               "cannot be retrieved. err=-3",
    # NCCL's IB probe in its WARN wording (src/misc/ibvwrap.cc, NCCL 2.4 to 2.1x), which nccl-error's
    # `NCCL WARN` pattern would read too: the harmless entry keeps it from every rule
    "nccl-ibverbs-probe": "job-7f3a-worker-0:4721:4721 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open "
                          "libibverbs.so[.1]",
    # the aws-ofi-nccl plugin's platform probe (src/platform-aws.c, get_platform_type)
    "nccl-ofi-platform-probe": "job-7f3a-worker-0:4721:4730 [0] get_platform_type:110 NCCL WARN NET/OFI Error "
                               "opening file: /sys/devices/virtual/dmi/id/product_name",
    "nccl-env-deprecated": "[W1129 18:48:40.123456789 Utils.hpp:164] Warning: Environment variable "
                           "NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead "
                           "(function operator())",
    "barrier-device-guess": "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py:4631: "
                            "UserWarning: No device id is provided via `init_process_group` or `barrier `. Using "
                            "the current device set by the user. ",
    "ddp-no-unused-parameters": "[W1129 18:49:02.490301705 reducer.cpp:1431] Warning: find_unused_parameters=True "
                                "was specified in DDP constructor, but did not find any unused parameters in the "
                                "forward pass. This flag results in an extra traversal of the autograd graph every "
                                "iteration,  which can adversely affect performance. (function operator())",
    "ddp-grad-strides": "/opt/venv/lib/python3.11/site-packages/torch/autograd/graph.py:824: UserWarning: Grad "
                        "strides do not match bucket view strides. This may indicate grad was not created according "
                        "to the gradient layout contract, or that the param's strides changed since DDP was "
                        "constructed.  This is not an error, but may impair performance.",
    "process-group-not-destroyed": "[W1129 18:52:13.975432556 ProcessGroupNCCL.cpp:1538] Warning: WARNING: "
                                   "destroy_process_group() was not called before program exit, which can leak "
                                   "resources. For more info, please see "
                                   "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    "connect-address-unavailable": "[W ..\\torch\\csrc\\distributed\\c10d\\socket.cpp:558] [c10d] The client socket "
                                   "has failed to connect to [kubernetes.docker.internal]:29500 (system error: 10049 - "
                                   "The requested address is not valid in its context.).",
    "tcpstore-libuv-cleanup": "[I1129 18:52:14.001234567 TCPStoreLibUvBackend.cpp:1272] [c10d] uv_loop cleanup "
                              "finished.",
}
# torchrun's banner and DDP's two training-step notes are also signals' lines (torchrun-started,
# training-step-warning): they show torchrun ran, so a paste that holds them and then stops is
# judged by the hang rules once read past the rendezvous timeout (as before these entries). The
# paste "where nothing shows the job ran" is the others.
SIGNAL_LINES = {"torchrun-start-banner", "ddp-no-unused-parameters", "ddp-grad-strides"}
NOT_RUN = {rule: line for rule, line in PASTE.items() if rule not in SIGNAL_LINES}
# tests/torch_source/formats.toml, family exceptions: an NCCL error no harmless line may hide.
FAILURE = ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled "
           "system error, NCCL version 2.14.3")


def _scan(run_cli, path, fmt="json"):
    result = run_cli("scan", path, "--format", fmt, "--now", POST_MORTEM_NOW)
    return json.loads(result.stdout) if fmt == "json" else result.stdout


def _write(tmp_path, lines, name="paste.log"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_each_entry_is_one_reviewable_declaration(entry):
    assert entry.summary and "\n" not in entry.summary and entry.references, entry.id
    if entry.reuses is not None:  # its lines are a signal's: patterns declared once, there
        assert entry.reuses in CATALOGUE.signals and not entry.patterns
        return
    assert entry.tests["fire"] and entry.tests["quiet"], entry.id
    for line in entry.tests["fire"]:
        assert any(kw in line for kw in entry.keywords), line
        assert entry.match(strip_prefixes(line).body) is not None, f"should fire: {line}"
    for line in entry.tests["quiet"]:
        assert entry.match(strip_prefixes(line).body) is None, f"should stay quiet: {line}"


def test_the_paste_covers_every_entry():
    assert set(PASTE) == set(CATALOGUE.harmless)


def test_a_paste_of_harmless_warnings_names_each_once_and_says_no_failure(run_cli, tmp_path):
    path = _write(tmp_path, list(NOT_RUN.values()))
    report = _scan(run_cli, path)
    assert report["verdict"] == "INCONCLUSIVE" and report["findings"] == []
    assert "no failure in these lines" in report["summary"] and report["no_failure_seen"]
    named = [(h["rule"], h["line"], h["count"]) for h in report["harmless"]]
    assert named == [(rule, i + 1, 1) for i, rule in enumerate(NOT_RUN)]
    for note in report["harmless"]:
        assert note["meaning"] == CATALOGUE.harmless[note["rule"]].summary
        assert note["file"].endswith("paste.log") and note["text"] == NOT_RUN[note["rule"]]
        assert note["reference"].startswith("https://")


# Other releases' wordings of two entries (synthetic, from each release's format string): DDP's
# note as 1.8 worded it (`[W reducer.cpp:1050]`, no `in the forward pass`), and the process-group
# destructor's note as the 2.4 nightlies worded it (`before it is being destructed`).
OTHER_WORDINGS = {
    "ddp-no-unused-parameters": "[W reducer.cpp:1050] Warning: find_unused_parameters=True was specified in DDP "
                                "constructor, but did not find any unused parameters. This flag results in an extra "
                                "traversal of the autograd graph every iteration, which can adversely affect "
                                "performance. (function operator())",
    "process-group-not-destroyed": "[rank2]:[W1129 18:52:13.402113377 ProcessGroupNCCL.cpp:1117] WARNING: process "
                                   "group has NOT been destroyed before it is being destructed. On normal program "
                                   "exit, the application should call destroy_process_group to ensure that any "
                                   "pending NCCL data transfers have finished in this process.",
}


@pytest.mark.parametrize("rule", sorted(OTHER_WORDINGS))
def test_another_release_s_wording_of_a_harmless_line_is_named(run_cli, tmp_path, rule):
    report = _scan(run_cli, _write(tmp_path, [OTHER_WORDINGS[rule]]))
    assert report["verdict"] == "INCONCLUSIVE" and report["findings"] == []
    assert [h["rule"] for h in report["harmless"]] == [rule]


def test_the_human_and_html_reports_show_them(run_cli, tmp_path):
    path = _write(tmp_path, list(NOT_RUN.values()))
    human = _scan(run_cli, path, "human")
    assert "no failure in these lines" in human.splitlines()[0]
    assert "Known-harmless warnings" in human
    assert all(rule in human for rule in NOT_RUN)
    page = _scan(run_cli, path, "html")
    assert 'id="harmless"' in page and all(rule in page for rule in NOT_RUN)


def test_a_repeated_warning_is_named_once_with_its_count(run_cli, tmp_path):
    """The same warning from the same process on five epochs: one entry, five lines, the first's place."""
    line = PASTE["barrier-device-guess"]
    report = _scan(run_cli, _write(tmp_path, [PASTE["ipv6-probe"]] + [line] * 5))
    guess = next(h for h in report["harmless"] if h["rule"] == "barrier-device-guess")
    assert (guess["line"], guess["count"]) == (2, 5)


def test_harmless_lines_never_make_a_finding_nor_hide_a_real_failure(run_cli, tmp_path):
    alone = _scan(run_cli, _write(tmp_path, [FAILURE], "alone.log"))
    mixed = _scan(run_cli, _write(tmp_path, list(PASTE.values())[:4] + [FAILURE] + list(PASTE.values())[4:],
                                  "mixed.log"))
    assert alone["verdict"] == mixed["verdict"] == "FAILED"
    assert [f["rule"] for f in mixed["findings"]] == [f["rule"] for f in alone["findings"]]
    assert mixed["root_cause"]["rule"] == alone["root_cause"]["rule"]
    # a failed job's report is about its failure
    assert mixed["harmless"] == [] and not mixed["no_failure_seen"]


def test_untrusted_text_in_a_harmless_line_is_shown_escaped(run_cli, tmp_path):
    hostile = PASTE["client-hostname-unknown"] + " <script>alert(1)</script>\x1b[31m"
    path = _write(tmp_path, [hostile])
    page = _scan(run_cli, path, "html")
    assert "<script>alert(1)</script>" not in page and "client-hostname-unknown" in page
    assert "\x1b[31m" not in _scan(run_cli, path, "human")


def test_a_healthy_run_names_the_banner_through_its_signal(run_cli):
    report = _scan(run_cli, SAMPLES / "healthy-2x2")
    assert report["verdict"] == "HEALTHY"
    assert [h["rule"] for h in report["harmless"]] == ["torchrun-start-banner"]


@pytest.mark.parametrize("extra, problem", [
    ('signal = "torchrun-started"\n', "signal"),
    ('', "references"),
])
def test_a_harmless_file_that_says_too_much_or_too_little_is_refused(run_cli, tmp_path, extra, problem):
    references = '' if problem == "references" else 'references = ["https://example.org"]\n'
    (tmp_path / "mine.toml").write_text(
        'id = "my-warning"\nkind = "harmless"\nstage = "init"\nmeaning = "Ours, and harmless."\n'
        'keywords = ["ours"]\npatterns = ["ours"]\n' + references + extra
        + '[tests]\nfire = ["ours"]\nquiet = ["theirs"]\n')
    result = run_cli("rules", "--rules", tmp_path)
    assert result.exit_code == 2 and "mine.toml" in result.output and f"'{problem}'" in result.output, result.output
