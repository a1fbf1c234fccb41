"""Times from headers that print no year (glog's, as torch's Python formatter and its C++ logger
write it) are kept: they order causes across Workers, take their year from a full timestamp of the
same job, and are never shown with a year nobody printed.

Two kinds of input: real torch 2.4.1 samples (their agent lines carry the header), and synthetic
Worker logs whose lines are built from the format strings in torch's source (tests/torch_source:
`{L}{mmdd hh:mm:ss}.{usec:06d} {pid} {path}:{line}]` for the Python formatter, c10's
`[{L}{(month)*100 + day} hh:mm:ss.{9 digits} file:line]` for the C++ logger, and the agent's
`failed (exitcode: N) local_rank: L (pid: P) of binary: B`); the tests that use them say so.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from conftest import POST_MORTEM_NOW, SAMPLES
from logscan.scan.clock import YearlessTime, read_time, resolve_years
from logscan.scan.prefixes import strip_prefixes


@pytest.mark.parametrize("line, shown", [
    ("W1201 19:58:00.519000 139660045224832 torch/distributed/run.py:779] x", "--12-01T19:58:00.519000"),
    ("I1129 18:48:38.105000 4715 torch/distributed/elastic/agent/server/api.py:714] x", "--11-29T18:48:38.105000"),
    # c10's logger does not pad the month; its fraction is a monotonic clock's, not the time's
    ("[W105 17:56:21.458368607 socket.cpp:207] [c10d] x", "--01-05T17:56:21"),
    ("[rank2]:[E1129 18:58:31.426415540 ProcessGroupNCCL.cpp:629] [Rank 2] x", "--11-29T18:58:31"),
    ("[I229 00:00:01.000000001 TCPStore.cpp:1] x", "--02-29T00:00:01"),
])
def test_a_headers_month_day_and_time_are_kept_without_a_year(line, shown):
    # Synthetic lines, built from the two formatters' format strings.
    stamp = strip_prefixes(line).time
    assert isinstance(stamp, YearlessTime)
    assert stamp.isoformat() == shown and str(stamp) == shown.replace("T", " ")
    assert stamp.strftime("%Y-%m-%d %H:%M:%S") == "--" + shown[2:16].replace("T", " ")
    assert read_time(stamp.isoformat()) == stamp


def test_a_date_no_calendar_has_is_no_time():
    assert strip_prefixes("[W1345 17:56:21.458368607 socket.cpp:207] x").time is None


def test_a_full_time_on_the_same_line_wins_over_the_header():
    line = "2026-12-01T19:00:00.5Z W1201 19:58:00.519000 4715 torch/distributed/run.py:779] x"
    assert strip_prefixes(line).time == datetime(2026, 12, 1, 19, 0, 0, 500000, tzinfo=timezone.utc)


LAUNCH = "DDP launch: nnodes=2 node_rank={node} gpus_per_node=1 total_procs=2 master=10.0.0.1:29500\n"
BANNER = "W{md} {clock}.000000 {pid} torch/distributed/run.py:779] Setting OMP_NUM_THREADS environment variable\n"
FAILED = ("E{md} {clock}.000000 {pid} torch/distributed/elastic/multiprocessing/api.py:833] failed "
          "(exitcode: {code}) local_rank: 0 (pid: {child}) of binary: /usr/bin/python3\n")
# Two different failures, so that neither is folded into the other as the same error told twice:
# node 0's process exits 1, node 1's is killed by SIGKILL.
EXIT_CODES = {0: 1, 1: -9}


def _worker_log(node: int, start: tuple[str, str], failed: tuple[str, str], extra: str = "") -> str:
    pid = 4700 + node
    return (LAUNCH.format(node=node) + extra
            + BANNER.format(md=start[0], clock=start[1], pid=pid)
            + f"torchrun env: RANK= {node} LOCAL_RANK= 0 WORLD_SIZE= 2\n"
            + "".join(f"step {i}/100 loss 0.5\n" for i in range(1, 4))
            + FAILED.format(md=failed[0], clock=failed[1], pid=pid, child=pid + 100,
                            code=EXIT_CODES[node]))


def _job(tmp_path, node0_failed, node1_failed, extra: str = ""):
    job = tmp_path / "job"
    for node, failed in ((0, node0_failed), (1, node1_failed)):
        (job / f"worker-{node}").mkdir(parents=True)
        (job / f"worker-{node}" / "launch_ddp.log").write_text(
            _worker_log(node, ("1231", "23:50:00"), failed, extra if node == 0 else ""))
    (job / "job_status").write_text("failed\n")
    return job


def _report(run_cli, path) -> dict:
    result = run_cli("scan", path, "--format", "json", "--now", POST_MORTEM_NOW)
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def test_the_earliest_failure_wins_across_nodes_over_new_year_with_only_header_times(tmp_path, run_cli):
    """Synthetic Worker logs (format strings, see the module docstring): node 1's process failed
    at 23:59:50 on 31 December, node 0's ten seconds after midnight. Only the headers carry
    times; node 1 is the first failure, and nothing shows a year."""
    report = _report(run_cli, _job(tmp_path, ("0101", "00:00:00"), ("1231", "23:59:50")))
    assert report["first_failure"]["node_rank"] == 1, report["first_failure"]
    assert report["root_cause"]["node_rank"] == 1
    times = [f["time"] for f in report["findings"] if f["time"]]
    assert times and all(t.startswith("--") for t in times), times


def test_year_less_times_take_the_year_of_a_full_timestamp_in_the_job(tmp_path, run_cli):
    """As above, with one Python logging line (a full time, synthetic) in node 0's log: the
    header times get its year, the ones after midnight the next one."""
    extra = "2026-12-31 23:49:59,000 - INFO - preparing data\n"
    report = _report(run_cli, _job(tmp_path, ("0101", "00:00:00"), ("1231", "23:59:50"), extra))
    assert report["first_failure"]["node_rank"] == 1
    by_node = {f["node_rank"]: f["time"] for f in report["findings"] if f["time"]}
    assert by_node[1] == "2026-12-31T23:59:50" and by_node[0] == "2027-01-01T00:00:00", by_node


def test_with_the_times_the_other_way_round_the_other_node_leads(tmp_path, run_cli):
    """The control for the two tests above: the same logs with node 0's failure the earlier one
    put node 0 first, so it is the times, not the node order or the kind of failure, that
    decide."""
    report = _report(run_cli, _job(tmp_path, ("1231", "23:59:40"), ("1231", "23:59:50")))
    assert report["first_failure"]["node_rank"] == 0


def test_real_torch_2_4_samples_times_take_the_summarys_year(run_cli):
    """native-crash-segv-torch2.4: the agent's `failed (exitcode: -11)` line has only glog's
    header; torchrun's failure summary (`time : 2026-12-01_19:59:44`) gives the year."""
    report = _report(run_cli, SAMPLES / "native-crash-segv-torch2.4")
    root = next(f for f in report["findings"] if f["message"] == report["root_cause"]["message"])
    assert root["time"] == "2026-12-01T19:59:44.885000"


def test_a_real_sample_without_any_full_time_shows_no_year(run_cli):
    """port-in-use (torch 2.x): its only times are glog headers, kept without a year."""
    result = run_cli("scan", SAMPLES / "port-in-use", "--format", "json", "--now", POST_MORTEM_NOW)
    report = json.loads(result.stdout)
    times = [f["time"] for f in report["findings"] if f["time"]]
    assert times and all(t.startswith("--11-29T") for t in times), times


def test_resolving_leaves_a_job_without_header_times_as_it_is():
    from logscan.scan.events import FileScan

    scans = [FileScan(path="a", display="a", first_time=datetime(2026, 1, 1))]
    assert resolve_years(scans) is scans


def test_header_times_beside_another_nodes_zoned_times_are_read_in_that_zone(tmp_path, run_cli):
    """Synthetic: node 0's log was collected with `kubectl logs --timestamps` (an RFC 3339 UTC
    time on every line, built from its format), node 1's carries only glog headers. Node 1's
    times take the year and zone of node 0's, so the two nodes compare: node 1 failed first."""
    job = _job(tmp_path, ("0101", "00:00:00"), ("1231", "23:59:50"))
    log = job / "worker-0" / "launch_ddp.log"
    stamped = [f"2027-01-01T00:00:{i:02d}.000000000Z {line}" for i, line in
               enumerate(log.read_text().splitlines())]
    log.write_text("\n".join(stamped) + "\n")
    report = _report(run_cli, job)
    assert report["first_failure"]["node_rank"] == 1
    by_node = {f["node_rank"]: f["time"] for f in report["findings"] if f["time"]}
    assert by_node[1] == "2026-12-31T23:59:50+00:00", by_node
