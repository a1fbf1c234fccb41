"""torch 1.9's and 1.10's torchrun tell a run's end in their own JSON: the events it records
(`torchelastic.worker.status.<STATE>`, one per worker and one for the agent, printed by the
console event handler, torch 1.9.0's default) and the error its error handler logs, one field a
line (`[ERROR] ... error_handler: {` / `  "message": {` / `    "message": "ExcType: detail",`).

The lines are synthetic, built from those format strings (elastic/events/api.py Event.serialize,
elastic/agent/server/api.py _construct_event, errors/error_handler.py record_exception)."""

from __future__ import annotations

import json

import pytest

from conftest import POST_MORTEM_NOW


def _event(state: str, source: str, rank) -> str:
    return json.dumps({"name": f"torchelastic.worker.status.{state}", "source": source, "timestamp": 0,
                       "metadata": {"run_id": "1234", "global_rank": rank, "group_rank": 1, "worker_id": "28454",
                                    "role": "default", "hostname": "node-1", "state": state, "total_run_time": 43,
                                    "rdzv_backend": "c10d", "raw_error": None, "agent_restarts": 3}})


def _error_handler(message: str) -> str:
    return ("[ERROR] 2021-09-14 14:03:12,880 error_handler: {\n  \"message\": {\n    \"message\": "
            + json.dumps(message) + ",\n    \"extraInfo\": {\n      \"timestamp\": \"1631628192\"\n    }\n  }\n}\n")


def _scan(run_cli, tmp_path, text: str) -> dict:
    (tmp_path / "paste.log").write_text(text)
    result = run_cli("scan", tmp_path / "paste.log", "--format", "json", "--isolated", "--now", POST_MORTEM_NOW)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_the_agents_succeeded_event_after_a_failed_worker_is_no_success(run_cli, tmp_path):
    """launch_agent records the agent's SUCCEEDED event whenever agent.run() returns ("NOT that
    workers have succeeded", its comment), then raises ChildFailedError for the failed workers."""
    text = _event("FAILED", "WORKER", 1) + "\n" + _event("SUCCEEDED", "AGENT", None) + "\n" + \
        _error_handler("MemoryError: std::bad_alloc")
    report = _scan(run_cli, tmp_path, text)
    assert report["verdict"] == "FAILED"
    assert "MemoryError: std::bad_alloc" in report["root_cause"]["message"]


def test_every_workers_succeeded_event_is_the_groups_success(run_cli, tmp_path):
    text = "".join(_event("SUCCEEDED", "WORKER", rank) + "\n" for rank in (0, 1)) + \
        _event("SUCCEEDED", "AGENT", None) + "\n"
    assert _scan(run_cli, tmp_path, text)["verdict"] == "HEALTHY"


@pytest.mark.parametrize("message, rule", [
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "crash-before-first-batch"),
    ("ValueError: Expected input batch_size (8) to match target batch_size (4).", "crash-before-first-batch"),
    ("RendezvousClosedError: ", "rendezvous-closed"),
])
def test_the_error_torchruns_error_handler_logs_is_read(run_cli, tmp_path, message, rule):
    report = _scan(run_cli, tmp_path, _error_handler(message))
    assert report["verdict"] == "FAILED"
    assert report["root_cause"]["rule"] == rule


def test_a_rendezvous_error_in_the_error_handler_is_torchruns_own_not_a_process_crash(run_cli, tmp_path):
    report = _scan(run_cli, tmp_path, _error_handler(
        "RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details."))
    assert report["root_cause"]["rule"] == "hang-in-rendezvous"
    assert not any(f["rule"].startswith("crash-") for f in report["findings"])


def test_a_failed_worker_and_the_agents_succeeded_event_alone_are_never_healthy(run_cli, tmp_path):
    text = _event("FAILED", "WORKER", 1) + "\n" + _event("SUCCEEDED", "AGENT", None) + "\n"
    assert _scan(run_cli, tmp_path, text)["verdict"] != "HEALTHY"
