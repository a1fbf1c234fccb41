"""The store client's lost connection in every release's wording (formats.toml entry
store-recv-closed, from the string tables of the wheels): torch 2.6 raises `failed to recv, got 0
bytes` (lower case, nothing after it), 2.8 on `Failed to recv, got 0 bytes. Connection was likely
closed. ...`; 2.6 and 2.11 warn `[c10d] recvValue failed on SocketImpl(...): ...` first. Each is a
lost peer. The real run missing-worker-torch2.6 raised the 2.6 form on node 1 when node 0's store
went away; the other lines are built from the format strings and say so in formats.toml."""

from __future__ import annotations

import pytest

from conftest import SAMPLES, torch_source_entries
from logscan.catalogue import load_catalogue
from logscan.scan.prefixes import strip_prefixes

CATALOGUE = load_catalogue()
RECV_WARNING_2_6 = ("[W1202 01:08:59.123456789 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=3, "
                    "addr=[::ffff:10.0.0.2]:33966, remote=[::ffff:10.0.0.1]:29500): failed to recv, got 0 bytes")


def _matched(line):
    body = strip_prefixes(line).body
    return {rule.id for rule in CATALOGUE.matchers if rule.match(body) is not None}


@pytest.mark.parametrize("line", [*next(e for e in torch_source_entries() if e["id"] == "store-recv-closed")["examples"],
                                  RECV_WARNING_2_6])
def test_every_release_s_store_connection_loss_is_peer_lost(line):
    assert "peer-lost" in _matched(line)


def test_the_real_2_6_run_raised_the_short_form():
    log = (SAMPLES / "missing-worker-torch2.6" / "worker-1" / "launch_ddp.log").read_text()
    (line,) = [x for x in log.splitlines() if "recv, got 0 bytes" in x]
    assert line.endswith("failed to recv, got 0 bytes")
    assert "peer-lost" in _matched(line)


@pytest.mark.parametrize("line", [
    "failed to receive the batch from the queue; got 0 bytes of 4096 so far, retrying",
    "recv: got 0 bytes of header, waiting",
])
def test_other_zero_byte_reads_are_not_a_lost_peer(line):
    assert "peer-lost" not in _matched(line)
