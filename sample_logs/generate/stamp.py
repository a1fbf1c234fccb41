"""Prefix every line with an RFC 3339 UTC time with nanoseconds, as `kubectl logs --timestamps` does.

Reads bytes from stdin and writes each line as soon as it is complete (a `\r` redraw stays inside
its line, as it does in container logs).
"""
import sys
import time


def stamp():
    ns = time.time_ns()
    secs, frac = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:09d}Z "


out = sys.stdout.buffer
for line in sys.stdin.buffer:
    out.write(stamp().encode() + line)
    out.flush()
