"""When no rule names the event, the decisive novel line comes first, however much chatter is
printed after it.

Every paste here is SYNTHETIC: lines built from the format strings of torch's own source, filled
with plausible values and given the C++ logger's header of torch 2.3 and later (`[I1129 hh:mm:ss.
nnnnnnnnn file.cpp:N] `; tests/torch_source/formats.toml, entry cpp-prefix). Where each format
string is:
- torch/csrc/distributed/c10d/TCPStoreLibUvBackend.cpp (the libuv store, torch 2.4 and later):
  C10D_INFO "uv_loop cleanup finished.", "uv_loop_close failed with:{} errn:{} desc:{}",
  "Failed to bind to ipv6 address, trying ipv4. Error: {}"; C10D_DEBUG "Uv main loop running",
  "Remote peer closed the connection.", "Store exit requested"; C10D_WARNING "Failed to accept
  client due to {}", "Error processing client message: {}", "Write to client failed. code:{}
  name:{} desc:{}.", "Failed to setup read callback. client:{} code:{} name:{} desc:{}."; C10D_ERROR
  "loop cleanup didn't work"; the messages they quote: "Failed to accept socket. code: ..., name:
  ..., message: ..." and "Invalid string size. size: ..., max: ..." (same file).
- torch/csrc/distributed/c10d/socket.cpp: "failed to format addr, unknown family={}" (the addrinfo
  formatter; the torch 2.5 store bug of issue 28), "The hostname of the client socket cannot be
  retrieved. err={}", "The IPv6 network addresses of ({}, {}) cannot be retrieved (gai error: {} -
  {}).".
- torch/csrc/distributed/c10d/Utils.hpp (NCCL_* names deprecated), ProcessGroupNCCL.cpp (the
  process group not destroyed): rules/harmless/.
Each paste mixes chatter with one decisive line, the chatter mostly after it (a store's clean-up
is printed last), so nearness to the end alone would put the chatter first.
"""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW

I = "[I1129 18:52:13.{:09d} TCPStoreLibUvBackend.cpp:{}] [c10d] "          # C10D_INFO
D = "[I1129 18:52:13.{:09d} TCPStoreLibUvBackend.cpp:{}] [c10d - debug] "  # C10D_DEBUG
W = "[W1129 18:52:13.{:09d} {}] [c10d] "                                   # C10D_WARNING
E = "[E1129 18:52:13.{:09d} TCPStoreLibUvBackend.cpp:{}] [c10d] "          # C10D_ERROR


def _cleanup(n: int = 0) -> list[str]:
    """The libuv store's INFO and DEBUG lines as it stops (TORCH_CPP_LOG_LEVEL=INFO)."""
    return [D.format(100 + n, 1251) + "Store exit requested",
            D.format(200 + n, 225) + "Remote peer closed the connection.",
            D.format(300 + n, 225) + "Remote peer closed the connection.",
            I.format(400 + n, 1262) + "uv_loop_close failed with:-16 errn:EBUSY desc:resource busy or locked",
            I.format(500 + n, 1262) + "uv_loop_close failed with:-16 errn:EBUSY desc:resource busy or locked",
            I.format(600 + n, 1272) + "uv_loop cleanup finished."]


START = [D.format(1, 1233) + "Uv main loop running",
         I.format(2, 1190) + "Failed to bind to ipv6 address, trying ipv4. Error: The server socket has "
                             "failed to bind. port: 29500, useIpv6: 1, code: -97, name: EAFNOSUPPORT, "
                             "message: address family not supported"]
HOSTNAME = "[W1129 18:52:12.458368607 socket.cpp:207] [c10d] The hostname of the client socket cannot be retrieved. err=-3"
IPV6 = ("[W1129 18:52:12.104412345 socket.cpp:755] [c10d] The IPv6 network addresses of (job-7f3a-worker-0, "
        "29500) cannot be retrieved (gai error: -9 - Address family for hostname not supported).")
NCCL_ENV = ("[W1129 18:52:12.123456789 Utils.hpp:164] Warning: Environment variable NCCL_BLOCKING_WAIT is "
            "deprecated; use TORCH_NCCL_BLOCKING_WAIT instead (function operator())")
NOT_DESTROYED = ("[rank0]:[W1129 18:52:14.214824770 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group "
                 "has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the "
                 "application should call destroy_process_group to ensure that any pending NCCL operations "
                 "have finished in this process. (function operator())")

# name → (the paste, the decisive line)
PASTES = {
    # torch 2.5's store bug: a client the server cannot name, amid the store's own chatter
    "unknown-address-family": (
        START + [HOSTNAME],
        W.format(225561340, "TCPStoreLibUvBackend.cpp:1105") + "Failed to accept client due to failed to "
        "format addr, unknown family=0",
        _cleanup()),
    # an error-level header with no error word of its own
    "error-level-only": (
        START,
        E.format(700, 1220) + "loop cleanup didn't work",
        _cleanup(1)),
    # the server out of file descriptors, amid IPv6 probing (which says `Failed` itself)
    "accept-emfile": (
        START + [IPV6, IPV6],
        W.format(800, "TCPStoreLibUvBackend.cpp:1105") + "Failed to accept client due to Failed to accept "
        "socket. code: -24, name: EMFILE, message: too many open files",
        [IPV6] + _cleanup(2)),
    # a malformed request, then the interpreter's clean-up warning as the last line
    "bad-request": (
        START,
        W.format(900, "TCPStoreLibUvBackend.cpp:268") + "Error processing client message: Invalid string "
        "size. size: 9000, max: 8192",
        _cleanup(3) + [NOT_DESTROYED]),
    # a socket that cannot be read, amid a job's start-up warnings
    "read-callback-ebadf": (
        [NCCL_ENV, HOSTNAME, IPV6],
        W.format(1000, "TCPStoreLibUvBackend.cpp:190") + "Failed to setup read callback. "
        "client:0x55d0c0ffee00 code:-9 name:EBADF desc:bad file descriptor.",
        [HOSTNAME] + _cleanup(4)),
    # a write to a client that went away, amid debug lines saying peers closed
    "write-epipe": (
        START + [NCCL_ENV],
        W.format(1100, "TCPStoreLibUvBackend.cpp:402") + "Write to client failed. code:-32 name:EPIPE "
        "desc:broken pipe.",
        _cleanup(5) + [NOT_DESTROYED]),
}


def _novel(run_cli, tmp_path, name: str) -> tuple[dict, str]:
    before, decisive, after = PASTES[name]
    paste = tmp_path / f"{name}.log"
    paste.write_text("\n".join(before + [decisive] + after) + "\n")
    report = json.loads(run_cli("scan", paste, "--format", "json", "--now", POST_MORTEM_NOW).stdout)
    return report, decisive


@pytest.mark.parametrize("name", sorted(PASTES))
def test_the_decisive_line_comes_first(run_cli, tmp_path, name):
    report, decisive = _novel(run_cli, tmp_path, name)
    novel = report["novel_lines"]
    assert novel and novel[0]["text"] == decisive, [n["text"][:100] for n in novel]
    assert report["verdict"] == "INCONCLUSIVE"  # no rule names the event


@pytest.mark.parametrize("name", sorted(PASTES))
def test_known_harmless_and_chatter_lines_say_why_they_sank(run_cli, tmp_path, name):
    report, _ = _novel(run_cli, tmp_path, name)
    for line in report["novel_lines"][1:]:
        if "uv_loop" in line["text"] or "[c10d - debug]" in line["text"]:
            assert "known to be harmless" in line["why"] or "chatter" in line["why"], line


def test_an_ordinary_last_line_still_outranks_chatter_before_it(tmp_path):
    """Where a job stopped is news even when it says nothing wrong (a job killed from outside):
    an ordinary line counts half of an error's weight, chatter a fifth."""
    from logscan.diagnose.novel_lines import line_weight

    ordinary, _ = line_weight("step 10/60 loss 0.3412")
    chatter, why = line_weight(I.format(1, 1272) + "uv_loop cleanup finished.")
    error, _ = line_weight("RuntimeError: Trying to read past end of buffer. buffer_idx: 3, available: 3, remaining: 12")
    assert error > ordinary > chatter and why == "INFO or debug chatter"
