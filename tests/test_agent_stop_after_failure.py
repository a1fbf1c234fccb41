"""torchrun's agent SIGTERMs the processes still alive in two cases only: one of them failed, or a
signal reached torchrun itself, which it logs first (agent/server/api.py, run: `Received %s death
signal, shutting down workers`, 1.9 on) and passes on. A healthy group is also stopped for a new
rendezvous round (elastic), which its round lines tell. So with torchrun's start (or any line
right above its SIGTERMs) in view, no such line before them, and a process left out of them, one of
its processes failed, even where that process's own lines are not in view.

The lines are SYNTHETIC, from the format strings of elastic/multiprocessing/api.py (`Sending process
%s closing signal %s`; MultiprocessContext._close's `Closing process %s via signal %s`) and
run.py's banner, in torch 1.x's `WARNING:logger:` and 2.x's glog-style headers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import SAMPLES, paste_report

BANNER_1X = ("WARNING:torch.distributed.run:\n*****************************************\n"
             "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
             "being overloaded, please further tune the variable for optimal performance in your application as "
             "needed. \n*****************************************\n")
BANNER_2X = ("W0314 02:29:01.100000 140021 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable "
             "for each process to be 1 in default, to avoid your system being overloaded, please further tune the "
             "variable for optimal performance in your application as needed.\n")
CLOSING = {
    "1.x subprocess": "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {pid} closing signal SIGTERM",
    "2.x multiprocessing": "W0314 02:29:10.582000 140021 torch/distributed/elastic/multiprocessing/api.py:655] "
                           "Closing process {pid} via signal SIGTERM",
}
DEATH_SIGNAL = {
    "1.x subprocess": "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers",
    "2.x multiprocessing": "W0314 02:29:10.580000 140021 torch/distributed/elastic/agent/server/api.py:719] Received "
                           "15 death signal, shutting down workers",
}


def _log(era: str, death_signal: bool, banner: bool = True) -> str:
    start = (BANNER_1X if era.startswith("1.") else BANNER_2X) if banner else ""
    stop = DEATH_SIGNAL[era] + "\n" if death_signal else ""
    return start + stop + "".join(CLOSING[era].format(pid=pid) + "\n" for pid in (1388065, 1388067))


@pytest.mark.parametrize("era", sorted(CLOSING))
def test_sigterms_with_no_signal_received_tell_a_failed_process(run_cli, tmp_path, era):
    report = paste_report(run_cli, tmp_path, _log(era, death_signal=False))
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert "torchrun stopped the other processes after it" in report["root_cause"]["message"]


@pytest.mark.parametrize("era", sorted(CLOSING))
def test_sigterms_after_a_signal_received_are_a_stop(run_cli, tmp_path, era):
    report = paste_report(run_cli, tmp_path, _log(era, death_signal=True))
    assert report["root_cause"]["rule"] == "stopped-from-outside"


@pytest.mark.parametrize("era", sorted(CLOSING))
def test_sigterms_without_torchruns_start_in_view_say_nothing_of_which(run_cli, tmp_path, era):
    """The signal's line could be above the excerpt."""
    report = paste_report(run_cli, tmp_path, _log(era, death_signal=False, banner=False))
    assert report["verdict"] == "INCONCLUSIVE", report["verdict_reason"]


# A process's own line right above the SIGTERMs (PyTorch's warning at a process's exit, a progress
# bar): the log is in view where torchrun would have logged a signal it received.
LINE_ABOVE = ["[rank0]:[W314 02:29:10.293812312 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT "
              "been destroyed before we destruct ProcessGroupNCCL.",
              "Loading checkpoint shards:  47%|####7     | 28/59 [01:12<01:20,  2.60s/it]"]


@pytest.mark.parametrize("era", sorted(CLOSING))
@pytest.mark.parametrize("above", LINE_ABOVE, ids=["exit-warning", "bar"])
def test_sigterms_below_a_line_of_the_run_and_no_signal_tell_a_failed_process(run_cli, tmp_path, era, above):
    report = paste_report(run_cli, tmp_path, above + "\n" + _log(era, death_signal=False, banner=False))
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert "torchrun stopped the other processes after it" in report["root_cause"]["message"]
    stopped = above + "\n" + _log(era, death_signal=True, banner=False)
    assert paste_report(run_cli, tmp_path, stopped)["root_cause"]["rule"] == "stopped-from-outside"


def test_sigterms_of_every_process_then_more_of_the_run_are_no_failure(run_cli, tmp_path):
    """Consecutive pids, none left out, and training after them: an elastic agent stopping a healthy
    group for a new round (the elastic-late-node samples)."""
    text = (BANNER_2X + "step 15/60 loss 1.40\n"
            + "".join(CLOSING["2.x multiprocessing"].format(pid=pid) + "\n" for pid in (4041, 4042))
            + "step 1/60 loss 1.41\n")
    report = paste_report(run_cli, tmp_path, text)
    assert report["verdict"] != "FAILED", report["findings"]


@pytest.mark.parametrize("above", ["", "step 15/60 loss 1.40\n",
                                   # glued behind a bar that was never ended by a newline
                                   "Loading checkpoint shards:  47%|####7     | 28/59 [01:12<01:20,  2.60s/it]"])
def test_sigterms_of_every_process_ending_a_lone_workers_log_tell_a_failure(run_cli, tmp_path, above):
    """Every process SIGTERMed, no signal before and nothing of the run after: a process had failed
    (torchrun's first stop of a failed group names the processes still alive, and its pid may sit at
    either end of their span). The elastic re-form that does the same goes on training after it."""
    text = BANNER_2X + above + "".join(CLOSING["2.x multiprocessing"].format(pid=pid) + "\n" for pid in (4041, 4042))
    report = paste_report(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED", report["verdict_reason"]
    assert "torchrun stopped the other processes after it" in report["root_cause"]["message"]


def test_sigterms_after_the_agents_own_error_are_its_failure_not_a_process_s(run_cli, tmp_path):
    """torchrun that lost its rendezvous store (dynamic_rendezvous's keep-alive failure) stops its
    processes too: that failure is what the job shows."""
    text = ("WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'node-b_3427_0' has failed "
            "to send a keep-alive heartbeat to the rendezvous 'test' due to an error of type "
            "RendezvousConnectionError.\n"
            + CLOSING["1.x subprocess"].format(pid=3494) + "\n")
    report = paste_report(run_cli, tmp_path, text)
    assert "torchrun stopped the other processes after it" not in str(report["findings"])


# --- real runs, cut to torchrun's own lines up to its SIGTERMs --------------------------------
# What a paste of torchrun's side alone shows (the processes' output kept elsewhere: --log-dir,
# --redirects, or not pasted). Derived from the real samples, not hand-written.

OWN_LINE = re.compile(r"torch/distributed/|torch\.distributed\.|^\*{5,}|^Setting OMP_NUM_THREADS")


def _torchruns_side(sample: Path, into: Path) -> Path:
    for log in sorted(sample.glob("worker-*/launch_ddp.log")):
        kept = []
        for text in log.read_text(errors="replace").splitlines():
            if OWN_LINE.search(text):
                kept.append(text)
            if "closing signal SIGTERM" in text:
                break
        (into / log.parent.name).mkdir(parents=True)
        (into / log.parent.name / "launch_ddp.log").write_text("\n".join(kept) + "\n")
    return into


def _samples_with(words: str) -> list[str]:
    return sorted(d.name for d in SAMPLES.iterdir()
                  if any(words in log.read_text(errors="replace") for log in d.glob("worker-*/launch_ddp.log")))


@pytest.mark.parametrize("sample", _samples_with("closing signal SIGTERM"))
def test_torchruns_side_of_a_real_run_cut_at_its_sigterms(run_cli, tmp_path, sample):
    """Never HEALTHY; a run torchrun was signalled to stop is still told as that stop; a run whose
    expected diagnosis is HEALTHY (an elastic group re-formed, a restart that recovered) is never
    FAILED by this reading alone."""
    import json as _json

    expect = _json.loads((SAMPLES / sample / "expected.json").read_text())["expect"]
    got = _json.loads(run_cli("scan", _torchruns_side(SAMPLES / sample, tmp_path / "job"), "--format", "json").stdout)
    assert got["verdict"] != "HEALTHY"
    if (expect.get("root_cause") or {}).get("rule") == "stopped-from-outside":
        assert got["root_cause"]["rule"] == "stopped-from-outside"
    if expect["verdict"] == "HEALTHY":
        assert "torchrun stopped the other processes after it" not in _json.dumps(got["findings"])


# The process torchrun's SIGTERMs left out (one gap in their pids) is the one that failed, where no
# line names it otherwise (synthetic lines from api.py's format strings; a paste may cut the closing
# line before its signal).
@pytest.mark.parametrize("closing, after", [
    (CLOSING["1.x subprocess"], []),
    (CLOSING["1.x subprocess"].replace(" signal SIGTERM", ""),
     ["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rankroot/bin/python"]),
], ids=["sigterms-alone", "cut-closing-and-damaged-failed-line"])
def test_the_one_process_torchruns_sigterms_left_out_is_named(run_cli, tmp_path, closing, after):
    lines = ["[rank0]: some output of the run", *(closing.format(pid=pid) for pid in (53038, 53039, 53041)), *after]
    report = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED"
    assert "the process with pid 53040 " in report["root_cause"]["message"]


def test_sigterms_that_leave_several_pids_out_name_none(run_cli, tmp_path):
    lines = ["[rank0]: some output of the run", *(CLOSING["1.x subprocess"].format(pid=pid) for pid in (53038, 53041))]
    report = paste_report(run_cli, tmp_path, "\n".join(lines) + "\n")
    assert report["verdict"] == "FAILED" and "pid " not in report["root_cause"]["message"]


def test_the_left_out_pid_is_one_gap_of_one_and_is_found_without_walking_the_span():
    from logscan.model.failures import left_out_pid

    assert left_out_pid([53038, 53039, 53041]) == 53040
    assert left_out_pid([5, 7, 9]) is None and left_out_pid([5, 8]) is None and left_out_pid([5]) is None
    assert left_out_pid([1, 10**15]) is None  # a hostile pid span costs nothing
