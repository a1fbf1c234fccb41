"""A process ended by a signal is named by that signal, with what it usually means, in every
wording an exit status takes (torchrun's -N, a shell's 128 + N, the signal's name)."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.exit_signals import SIGNALS, parse_signal, signal_of_exit


@pytest.mark.parametrize("sample, rank, name, code", [("native-crash-segv", 1, "SIGSEGV", -11),
                                                      ("abort-sigabrt", 2, "SIGABRT", -6)])
def test_a_native_crash_is_named_by_its_signal(run_cli, sample, rank, name, code):
    """Real runs: rank 1 read address 0 (SIGSEGV), rank 2 called os.abort() (SIGABRT)."""
    result = run_cli("scan", SAMPLES / sample, "--format", "json", "--now", POST_MORTEM_NOW)
    root = json.loads(result.stdout)["root_cause"]
    assert root["rank"] == rank
    assert f"was killed by {name} (exit code {code})" in root["message"]
    assert SIGNALS[-code].meaning in root["message"]


@pytest.mark.parametrize("text, number", [("15", 15), ("Signals.SIGHUP", 1), ("SIGINT", 2),
                                          ("SIGWHAT", None), ("", None)])
def test_a_signal_in_every_wording(text, number):
    assert parse_signal(text) == number


@pytest.mark.parametrize("code, number", [(-9, 9), (-11, 11), (137, 9), (139, 11), (143, 15),
                                          (1, None), (0, None), (128, None), (255, None)])
def test_exit_statuses_that_name_a_signal(code, number):
    assert signal_of_exit(code) == number


def test_every_signal_a_platform_sends_has_a_meaning_and_a_hint():
    wanted = {"SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL",
              "SIGSEGV", "SIGPIPE", "SIGTERM", "SIGXCPU"}
    named = {s.name: s for s in SIGNALS.values()}
    assert wanted <= set(named)
    assert all(named[n].meaning and named[n].hint.endswith(".") for n in wanted)
