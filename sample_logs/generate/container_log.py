"""Run a command and write its stdout and stderr into one file the way a container runtime does.

    python3 container_log.py cri|docker-json LOGFILE [--max-line N] -- COMMAND ...

The command's stdout and stderr are read from two separate pipes, so each record's stream is the
one the line really came from; records are written in the order the lines arrive. The exit status
is the command's (128 + N when a signal N ended it).

cri          the CRI log format that containerd and CRI-O write under /var/log/pods:
             `<RFC 3339 time, UTC, nanoseconds> <stdout|stderr> <F|P> <line>`. A line longer than
             --max-line bytes (default 200 here; containerd's default is 16384) is cut into pieces:
             every piece but the last is tagged P (partial), the last F. The newline is dropped,
             and so is a `\r` right before it (Go's bufio ReadLine).
docker-json  Docker's json-file log driver: one JSON object per record,
             `{"log":"<line>\n","stream":"stdout|stderr","time":"<RFC 3339 time>"}`. A line longer
             than --max-line bytes (default 16384, Docker's buffer) is written as pieces without the
             newline; the last piece carries it. `<`, `>`, `&`, U+2028 and U+2029 are escaped as Go's
             encoder escapes them; invalid UTF-8 becomes U+FFFD.

Times are Go's RFC3339Nano in UTC, as both runtimes write them: trailing zeros of the fraction are
dropped (`2026-12-01T19:00:00.1234Z`).
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time


def rfc3339nano(ns: int) -> str:
    secs, frac = divmod(ns, 1_000_000_000)
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs))
    digits = f"{frac:09d}".rstrip("0")
    return base + (f".{digits}" if digits else "") + "Z"


def go_json_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return (out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


class Writer:
    def __init__(self, fmt: str, path: str, max_line: int):
        self.fmt = fmt
        self.max_line = max_line
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def record(self, stream: str, piece: bytes, complete: bool):
        now = rfc3339nano(time.time_ns())
        if self.fmt == "cri":
            if complete and piece.endswith(b"\r"):
                piece = piece[:-1]
            data = f"{now} {stream} {'F' if complete else 'P'} ".encode() + piece + b"\n"
        else:
            text = (piece + (b"\n" if complete else b"")).decode("utf-8", "replace")
            data = ('{"log":' + go_json_string(text) + ',"stream":"' + stream + '","time":"' + now
                    + '"}\n').encode()
        os.write(self.fd, data)  # one write per record

    def feed(self, stream: str, buf: bytearray, final: bool = False):
        while True:
            nl = buf.find(b"\n")
            if nl != -1 and nl <= self.max_line:
                self.record(stream, bytes(buf[:nl]), True)
                del buf[:nl + 1]
            elif len(buf) > self.max_line:
                self.record(stream, bytes(buf[:self.max_line]), False)
                del buf[:self.max_line]
            else:
                break
        if final and buf:
            self.record(stream, bytes(buf), True)
            buf.clear()


def main(argv):
    fmt, path, rest = argv[0], argv[1], argv[2:]
    max_line = 200 if fmt == "cri" else 16384
    if rest and rest[0] == "--max-line":
        max_line = int(rest[1])
        rest = rest[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    if fmt not in ("cri", "docker-json") or not rest:
        print(__doc__, file=sys.stderr)
        return 2
    writer = Writer(fmt, path, max_line)
    proc = subprocess.Popen(rest, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Pass a stop signal on to the command, as a runtime stops the container's process.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: proc.send_signal(s))
    sel = selectors.DefaultSelector()
    bufs = {}
    for f, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
        sel.register(f, selectors.EVENT_READ, name)
        bufs[name] = bytearray()
    while sel.get_map():
        for key, _ in sel.select():
            name = key.data
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                writer.feed(name, bufs[name], final=True)
                continue
            bufs[name] += chunk
            writer.feed(name, bufs[name])
    rc = proc.wait()
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
