"""A Worker that could not reach the rendezvous store is told apart from one that waited for others,
and a traceback of torchrun's own rendezvous code is never a training process's crash."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES


def _report(run_cli, job) -> dict:
    return json.loads(run_cli("scan", job, "--format", "json", "--now", POST_MORTEM_NOW).stdout)


def test_the_worker_given_another_master_port_could_not_connect_and_says_where(run_cli):
    # Real: launch-mismatch's Worker 1 was given MASTER_PORT 29561, where nothing listened.
    report = _report(run_cli, SAMPLES / "launch-mismatch")
    hangs = {f["node_rank"]: f["message"] for f in report["findings"] if f["rule"] == "hang-in-rendezvous"}
    assert "could not connect to the rendezvous store at 127.0.0.1:29561" in hangs[1]
    assert "waiting for the other Workers" in hangs[0]


# Synthetic, from torch 1.10's own frames and messages (c10d_rendezvous_backend._create_tcp_store
# raising TCPStore's `connect() timed out`, chained to torchrun's RendezvousConnectionError): a
# Worker's console when the rendezvous endpoint never answered.
AGENT_TRACEBACK = """\
Traceback (most recent call last):
  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 155, in _create_tcp_store
    store = TCPStore(
RuntimeError: connect() timed out. Original timeout was 60000 ms.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/opt/conda/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/run.py", line 719, in main
    run(args)
torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.
"""


def test_torchruns_own_rendezvous_traceback_is_no_crash_of_a_process(run_cli, tmp_path):
    (tmp_path / "worker-1.log").write_text(AGENT_TRACEBACK)
    report = _report(run_cli, tmp_path)
    assert report["root_cause"]["rule"] == "hang-in-rendezvous"
    assert not any(f["rule"].startswith("crash-") for f in report["findings"])
    assert "could not connect to the rendezvous store" in report["root_cause"]["message"]


SHUTDOWN_FAILED = ("[2023-11-16 15:09:18,760] torch.distributed.elastic.rendezvous.dynamic_rendezvous: [WARNING] The node "
                   "'node04_3882442_0' has failed to shutdown the rendezvous 'job-1' due to an error of type "
                   "RendezvousConnectionError.")


@pytest.mark.parametrize("before", [
    # its processes stopped after the keep-alive lost the store
    ["[2023-11-16 15:09:18,364] torch.distributed.elastic.rendezvous.dynamic_rendezvous: [WARNING] The node "
     "'node04_3882442_0' has failed to send a keep-alive heartbeat to the rendezvous 'job-1' due to an error of type "
     "RendezvousConnectionError.",
     "[2023-11-16 15:09:18,742] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 7687 "
     "closing signal SIGTERM"],
    # its processes done, the shutdown alone
    [],
])
def test_torchrun_losing_the_store_as_it_leaves_the_rendezvous_is_no_wait_to_join(run_cli, tmp_path, before):
    """dynamic_rendezvous.py's `The node '%s' has failed to shutdown the rendezvous '%s' due to an error of type
    %s.` (synthetic lines): the store's host went away; no round was waited for."""
    from conftest import paste_report
    report = paste_report(run_cli, tmp_path, "\n".join([*before, SHUTDOWN_FAILED]) + "\n")
    assert report["root_cause"]["rule"] == "failure-elsewhere"
    assert "hang-in-rendezvous" not in {f["rule"] for f in report["findings"]}
