"""Lines that the real runs of torch 2.0.1, 2.4.1, 2.8.0 and 2.15.0 printed and formats.toml did not
list before, as built from their format strings there (tests/torch_source/formats.toml): each is
read for what it is, and none of the lines that only accompany an error is taken for one."""

from __future__ import annotations

import pytest

from conftest import torch_source_entries
from logscan.catalogue import load_catalogue
from logscan.scan.prefixes import strip_prefixes

CATALOGUE = load_catalogue()


def _examples(entry_id, keep=lambda line: True):
    (entry,) = [e for e in torch_source_entries() if e["id"] == entry_id]
    return [line for line in entry["examples"] if keep(line)]


def _matched(line):
    body = strip_prefixes(line).body
    return {rule.id for rule in CATALOGUE.matchers if rule.match(body) is not None}


@pytest.mark.parametrize("line", _examples("gloo-peer-suffixes"))
def test_every_release_s_lost_gloo_peer_is_peer_lost(line):
    assert "peer-lost" in _matched(line)


@pytest.mark.parametrize("line", _examples("store-socket-warnings", lambda x: "recvValueWithTimeout" in x))
def test_a_store_client_whose_server_went_away_lost_its_peer(line):
    assert "peer-lost" in _matched(line)


@pytest.mark.parametrize("line", [*_examples("store-socket-warnings", lambda x: "waitForInput" in x),
                                  *_examples("c10-backtrace"), *_examples("gloo-connected")])
def test_lines_that_only_accompany_an_error_or_a_start_match_nothing(line):
    """A socket's poll warnings come before the store's own timeout error, a C++ backtrace continues
    an exception's message, and gloo's connected line says init went well: none is a failure."""
    assert _matched(line) == set()
