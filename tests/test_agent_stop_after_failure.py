"""torchrun's agent SIGTERMs the processes still alive in two cases only: one of them failed, or a
signal reached torchrun itself, which it logs first (agent/server/api.py, run: `Received %s death
signal, shutting down workers`, 1.9 on) and passes on. A healthy group is also stopped for a new
rendezvous round (elastic), which its round lines tell. So with torchrun's start in view and no
such line before its SIGTERMs, one of its processes failed, even where that process's own lines
are not in view.

The lines are SYNTHETIC, from the format strings of elastic/multiprocessing/api.py (`Sending process
%s closing signal %s`; MultiprocessContext._close's `Closing process %s via signal %s`) and
run.py's banner, in torch 1.x's `WARNING:logger:` and 2.x's glog-style headers."""

from __future__ import annotations

import pytest

from conftest import paste_report

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
