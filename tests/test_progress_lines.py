"""Progress lines in the dress frameworks print them: torchtitan colours every field of its
metrics line (torchtitan/components/metrics.py, MetricsProcessor.log: `{color.red}step: {step}
{color.green}loss: {loss:7.4f} ...`, colours on by default). The lines here are built from that
format; the block search finds the edge lines in C whatever the block holds."""

from __future__ import annotations

import pytest

from logscan.scan.finders import ProgressFinder

PREFIX = "[rank0]:[titan] 2026-11-29 19:27:44,948 - root - INFO - "


@pytest.mark.parametrize("line", [
    PREFIX + "\x1b[31mstep: 12779  \x1b[32mloss:  3.37839  \x1b[38;2;180;60;0mgrad_norm:  0.2007\x1b[39m",
    PREFIX + "\x1b[32mloss:  3.10318  \x1b[34mtps: 6,217\x1b[39m",
])
def test_a_coloured_field_is_progress(line):
    assert ProgressFinder().is_progress_line(line.encode())


def test_the_edges_of_a_block_whose_ends_are_not_progress():
    noise = [f"{PREFIX}dataloader worker {i} fetched shard (warning: slow)".encode() for i in range(50)]
    steps = [(PREFIX + f"\x1b[31mstep: {i}  \x1b[32mloss:  3.1\x1b[39m").encode() for i in (7, 8, 9)]
    error = b"RuntimeError: step 10 failed"
    block = b"\n".join(noise + steps[:1] + noise + steps[1:] + [error] + noise) + b"\n"
    finder = ProgressFinder()
    first, last = finder.first(block), finder.last(block)
    assert block[first:].startswith(steps[0]) and block[last:].startswith(steps[2])
