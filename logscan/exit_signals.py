"""POSIX signals as a training platform sees them: what each one usually means when it ends a
training process or torchrun itself, and how an exit status names it.

An exit status names a signal three ways: Python's `Popen.returncode` (torchrun's `exitcode: -N`),
the shell's 128+N (`exit status 137`), or the signal's own name (`Signals.SIGKILL`, `SIGKILL`, `9`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ExitSignal:
    number: int
    name: str
    meaning: str          # what it usually means on a training platform, as a clause
    hint: str             # what to do about it, one sentence
    native_crash: bool = False  # the process crashed in native code: no Python traceback


_NATIVE_HINT = ("Run the failing rank with `PYTHONFAULTHANDLER=1` (and `gdb --args` or a core dump) to "
                "see the native frame; check that torch, CUDA and compiled extensions in the image "
                "were built for each other and for this CPU.")

SIGNALS = {s.number: s for s in (
    ExitSignal(1, "SIGHUP", "the terminal or session that ran the launch closed",
               "Start the launch detached from the terminal (`nohup`, `setsid`, tmux) or through the "
               "platform's job runner, not from an interactive session that can end."),
    ExitSignal(2, "SIGINT", "it was interrupted (Ctrl-C, or a stop request sent as an interrupt)",
               "If nobody stopped the job, check the platform's events for who sent the interrupt."),
    ExitSignal(3, "SIGQUIT", "it was asked to quit and dump core (Ctrl-\\ or a stop request)",
               "Check the platform's events for who stopped the job."),
    ExitSignal(4, "SIGILL", "it crashed on an instruction this CPU does not have", _NATIVE_HINT, True),
    ExitSignal(6, "SIGABRT", "native code aborted (an uncaught C++ exception or a failed assertion, "
               "such as NCCL's watchdog taking the process down)", _NATIVE_HINT, True),
    ExitSignal(7, "SIGBUS", "it crashed on a memory access, in containers most often a full /dev/shm "
               "under DataLoader workers", "Give the container a larger /dev/shm (`--shm-size`), or "
               "use fewer DataLoader workers; otherwise see the native frame with `PYTHONFAULTHANDLER=1`.",
               True),
    ExitSignal(8, "SIGFPE", "native code crashed on an arithmetic error", _NATIVE_HINT, True),
    ExitSignal(9, "SIGKILL", "it was killed outright, usually by the host's OOM killer or a forced stop",
               "Check the Worker's host memory use and the container's memory limit, and the "
               "platform's events for a forced stop."),
    ExitSignal(10, "SIGUSR1", "it got a user signal its code does not handle (often a scheduler's "
               "warning before preemption)", "Check the platform's preemption or time-limit notices."),
    ExitSignal(11, "SIGSEGV", "native code crashed (a segmentation fault in torch, CUDA or an extension)",
               _NATIVE_HINT, True),
    ExitSignal(12, "SIGUSR2", "it got a user signal its code does not handle",
               "Check which tool on the node sends SIGUSR2."),
    ExitSignal(13, "SIGPIPE", "it wrote to a pipe nobody reads any more (its `tee` or log collector went "
               "away)", "Keep the output's reader alive (`tee -i`, a log collector that outlives the job)."),
    ExitSignal(14, "SIGALRM", "an alarm it did not handle went off", "Check timers set in the script."),
    ExitSignal(15, "SIGTERM", "it was asked to stop (the platform ending the job: a cancel, a time limit, "
               "a preemption; or torchrun stopping the siblings of a failed process)",
               "Look for the first failure on the other Workers; if there is none, check the platform's "
               "events (cancelled, run-time limit, preemption)."),
    ExitSignal(24, "SIGXCPU", "its CPU-time limit ran out", "Raise the CPU-time limit (`ulimit -t`)."),
    ExitSignal(25, "SIGXFSZ", "it wrote a file larger than its file-size limit",
               "Raise the file-size limit (`ulimit -f`) or write smaller files."),
)}
BY_NAME = {s.name: s for s in SIGNALS.values()}
# glibc's strsignal() text of each signal: how Slurm's srun (and a shell) names a task's death.
BY_DESCRIPTION = {"Hangup": 1, "Interrupt": 2, "Quit": 3, "Illegal instruction": 4, "Aborted": 6,
                  "Bus error": 7, "Floating point exception": 8, "Killed": 9, "User defined signal 1": 10,
                  "Segmentation fault": 11, "User defined signal 2": 12, "Broken pipe": 13,
                  "Alarm clock": 14, "Terminated": 15, "CPU time limit exceeded": 24,
                  "File size limit exceeded": 25}

# The exception a Python process raises when a signal stops it: torchrun's SignalException for
# the SIGTERM (or SIGHUP) it forwards to its processes, KeyboardInterrupt for SIGINT. A process
# that ends in one was stopped from outside; it did not fail by itself.
SIGNAL_EXCEPTION = "SignalException"
INTERRUPTED = "KeyboardInterrupt"
STOPPED_BY_SIGNAL = (SIGNAL_EXCEPTION, INTERRUPTED)

SHELL_SIGNAL_BASE = 128  # a shell reports a child killed by signal N as exit status 128 + N
_NAME = re.compile(r"(?:Signals\.)?(SIG[A-Z0-9]+)")


def signal_of_exit(code: int | None) -> int | None:
    """The signal an exit status names: -N (Python's returncode) or 128 + N (a shell's)."""
    if code is None:
        return None
    if code < 0:
        return -code
    if SHELL_SIGNAL_BASE < code <= SHELL_SIGNAL_BASE + 64 and code - SHELL_SIGNAL_BASE in SIGNALS:
        return code - SHELL_SIGNAL_BASE
    return None


def parse_signal(text: str | None) -> int | None:
    """A signal as a log names it: `15`, `SIGTERM`, `Signals.SIGTERM`, a shell's `Terminated`, or the
    KeyboardInterrupt Python raises on SIGINT."""
    if not text:
        return None
    text = text.strip()
    if text.isdigit():
        return int(text)
    if text in BY_DESCRIPTION:
        return BY_DESCRIPTION[text]
    if text == INTERRUPTED:
        return BY_NAME["SIGINT"].number
    named = _NAME.fullmatch(text)
    return BY_NAME[named[1]].number if named and named[1] in BY_NAME else None


def signal_name(number: int) -> str:
    known = SIGNALS.get(number)
    return known.name if known else f"signal {number}"
