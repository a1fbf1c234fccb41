"""Build big jobs (many Workers, many env prints, many tracebacks) from the sample logs' lines.

Every line shape comes from a real sample at run time (crash-mid-training, healthy-2x2,
healthy-shared-append): its numbers become the fields a template fills in. The jobs:

- `workers`: N Workers, one `worker-i/launch_ddp.log` each, G GPUs per Worker. Each log is the
  launch line, torchrun's banner, G env prints and `step i/n loss x` lines up to about L lines;
  unless `--healthy`, it ends as the standard cascade of a big job: one rank on a middle Worker
  raises (`non-finite loss`), every other rank's collective fails (`Connection closed by peer`)
  and each torchrun prints its failure summary (its local rank 0 exit 1, the others SIGTERMed).
  The platform says `failed` (or `succeeded` with `--healthy`).
- `rendezvous`: N Workers of an (N+1)-node job, each log only the launch line and torchrun's
  banner: they waited in rendezvous for the node that never started (one finding per Worker).
- `shared`: N Workers appending to one log path: each Worker's launch line, banner, its env
  prints written two at a time into one line (as in healthy-shared-append) and its steps.
- `env`: one Worker whose log holds P env prints, interleaved in pairs as two processes write
  them into one stdout; `--distinct` gives every print its own RANK (a 10,000-rank world printed
  into one log), `--no-world-size` leaves WORLD_SIZE out (the prints stay incomplete).
- `tracebacks`: one Worker whose G ranks raise T tracebacks in all (`[rankR]:` prefixed, as
  torch >= 2.2 prints them), then torchrun's failure summary.

Usage: python bench/make_scale_logs.py KIND OUT [--workers N] [--lines L] [--gpus G] ...
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_logs"
GENERATOR_VERSION = 2  # bump when the content changes, so cached jobs are rebuilt

LOSSES = [f"{1.4 + ((i * 7919) % 400 - 200) / 1000:.4f}" for i in range(997)]


def _lines(rel: str) -> list[str]:
    path = SAMPLES / rel
    if not path.is_file():
        raise SystemExit(f"make_scale_logs: {path} is missing; were the samples changed?")
    return path.read_text(encoding="utf-8").splitlines()


def _block(lines: list[str], start: str, end: str) -> list[str]:
    """The lines from the first one holding `start` (from there) to the next one starting with `end`."""
    i = next((i for i, l in enumerate(lines) if start in l), None)
    if i is None:
        raise SystemExit(f"make_scale_logs: no sample line holds {start!r}")
    j = next((j for j in range(i, len(lines)) if lines[j].startswith(end)), None)
    if j is None:
        raise SystemExit(f"make_scale_logs: no sample line after {start!r} starts with {end!r}")
    # A traceback may begin after a progress bar's last redraw, on the bar's line.
    return [lines[i][lines[i].index(start):], *lines[i + 1:j + 1]]


class Shapes:
    """The real lines every generated line is made from (crash-mid-training's torch 2.x logs)."""

    def __init__(self):
        victim = _lines("crash-mid-training/worker-1/launch_ddp.log")
        root = _lines("crash-mid-training/worker-0/launch_ddp.log")
        healthy = _lines("healthy-2x2/worker-0/launch_ddp.log")
        self.launch = victim[0]
        if not self.launch.startswith("DDP launch:"):
            raise SystemExit("make_scale_logs: crash-mid-training/worker-1 no longer starts with its launch line")
        self.banner = [l for l in victim if "run.py:" in l and l.startswith("W")][:4]
        env = next(l for l in victim if l.startswith("torchrun env: RANK="))
        self.env = re.sub(r"RANK= \d+ LOCAL_RANK= \d+ WORLD_SIZE= \d+",
                          "RANK= {rank} LOCAL_RANK= {local} WORLD_SIZE= {world}", env)
        step = next(l for l in healthy if re.fullmatch(r"step \d+/\d+ loss [\d.]+", l))
        self.step = re.sub(r"step \d+/\d+ loss [\d.]+", "step {i}/{n} loss {loss}", step)
        # A collective that failed because a peer died, and the rank that raised by itself.
        self.victim_tb = _block(victim, "[rank2]: Traceback", "[rank2]: RuntimeError")
        self.root_tb = _block(root, "[rank1]: Traceback", "[rank1]: RuntimeError")
        # torchrun's end: SIGTERM to the siblings, the failed line, its traceback and summary.
        start = next(i for i, l in enumerate(victim) if "closing signal SIGTERM" in l)
        failures = next(i for i, l in enumerate(victim) if l.strip() == "Failures:")
        self.agent_head = victim[start:failures + 1]  # SIGTERM line ... `Failures:`
        entry = next(i for i in range(failures, len(victim)) if victim[i].startswith("[1]:"))
        self.sigterm_entry = victim[entry:entry + 7]
        rule = next(i for i in range(entry, len(victim)) if victim[i].startswith("-----"))
        root_at = next(i for i in range(rule, len(victim)) if victim[i].startswith("[0]:"))
        self.root_header = victim[rule:root_at]
        self.root_entry = victim[root_at:root_at + 7]
        self.agent_end = victim[root_at + 7:]

    def launch_line(self, nnodes: int, node_rank: int, gpus: int) -> str:
        line = re.sub(r"nnodes=\d+", f"nnodes={nnodes}", self.launch)
        line = re.sub(r"node_rank=\d+", f"node_rank={node_rank}", line)
        line = re.sub(r"gpus_per_node=\d+", f"gpus_per_node={gpus}", line)
        return re.sub(r"total_procs=\d+", f"total_procs={nnodes * gpus}", line)

    def env_line(self, rank: int, local: int, world: int | None) -> str:
        line = self.env.format(rank=rank, local=local, world=world)
        return line if world is not None else line.replace(f" WORLD_SIZE= {world}", "")

    def steps(self, count: int, total: int, start: int = 1) -> list[str]:
        return [self.step.format(i=i, n=total, loss=LOSSES[i % 997]) for i in range(start, start + count)]

    def traceback(self, rank: int, root: bool) -> list[str]:
        block = self.root_tb if root else self.victim_tb
        prefix = "[rank1]:" if root else "[rank2]:"
        return [l.replace(prefix, f"[rank{rank}]:", 1) for l in block]

    def agent_tail(self, node_rank: int, offset: int, gpus: int, failed_local: int) -> list[str]:
        """torchrun's end on one Worker: `failed_local` exited 1, every other local rank SIGTERMed."""
        host = f"job-cmt-worker-{node_rank}"
        out = [re.sub(r"local_rank: \d+", f"local_rank: {failed_local}", l) for l in self.agent_head]
        for n, local in enumerate(l for l in range(gpus) if l != failed_local):
            out += [_entry_line(l, n, offset + local, local, host) for l in self.sigterm_entry]
        out += self.root_header
        out += [_entry_line(l, 0, offset + failed_local, failed_local, host) for l in self.root_entry]
        return out + self.agent_end


def _entry_line(line: str, index: int, rank: int, local: int, host: str) -> str:
    line = re.sub(r"^\[\d+\]:", f"[{index}]:", line)
    line = re.sub(r"rank      : \d+ \(local_rank: \d+\)", f"rank      : {rank} (local_rank: {local})", line)
    return re.sub(r"host      : \S+", f"host      : {host}", line)


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")


def workers_job(out: Path, workers: int, lines: int, gpus: int, healthy: bool) -> None:
    shapes = Shapes()
    crash_node = (workers * 3) // 4  # not node 0: the lowest node_rank must not win by default
    crash_local = 1 % gpus
    total_steps = 10 * lines
    for node in range(workers):
        offset = node * gpus
        head = [shapes.launch_line(workers, node, gpus), *shapes.banner]
        head += [shapes.env_line(offset + local, local, workers * gpus) for local in range(gpus)]
        tail: list[str] = []
        if not healthy:
            for local in range(gpus):
                tail += shapes.traceback(offset + local, root=node == crash_node and local == crash_local)
            tail += shapes.agent_tail(node, offset, gpus, crash_local if node == crash_node else 0)
        steps = max(1, lines - len(head) - len(tail))
        _write(out / f"worker-{node}" / "launch_ddp.log",
               head + shapes.steps(steps, steps if healthy else total_steps) + tail)
    (out / "job_status").write_text("succeeded\n" if healthy else "failed\n")


def rendezvous_job(out: Path, workers: int, gpus: int) -> None:
    """N Workers of an (N+1)-node job waiting in rendezvous for the one that never started: each
    log is the launch line and torchrun's banner, then nothing (the platform stopped the job)."""
    shapes = Shapes()
    for node in range(workers):
        _write(out / f"worker-{node}" / "launch_ddp.log",
               [shapes.launch_line(workers + 1, node, gpus), *shapes.banner])
    (out / "job_status").write_text("failed\n")


def shared_job(out: Path, workers: int, lines: int, gpus: int) -> None:
    """Workers appending to one log: each one's launch line, banner, env prints two per line
    (`torchrun env:torchrun env: RANK= a ...` then ` RANK= b ...`) and its steps."""
    shapes = Shapes()
    text: list[str] = []
    per_worker = max(lines // workers, 8 + gpus)
    for node in range(workers):
        offset = node * gpus
        part = [shapes.launch_line(workers, node, gpus), *shapes.banner]
        part += _interleaved([shapes.env_line(offset + l, l, workers * gpus) for l in range(gpus)])
        steps = max(1, per_worker - len(part))
        part += shapes.steps(steps, steps)
        text += part
    _write(out / "launch_ddp.log", text)
    (out / "job_status").write_text("succeeded\n")


def _interleaved(prints: list[str]) -> list[str]:
    """Env prints written two at a time into one stdout, as healthy-shared-append shows them."""
    out = []
    for a, b in zip(prints[::2], prints[1::2]):
        out += ["torchrun env:" + a, b.replace("torchrun env:", "", 1)]
    if len(prints) % 2:
        out.append(prints[-1])
    return out


def env_job(out: Path, prints: int, gpus: int, distinct: bool, world_size: bool) -> None:
    shapes = Shapes()
    world = prints if distinct else gpus
    nnodes = max(1, world // gpus)
    lines = [shapes.launch_line(nnodes, 0, gpus), *shapes.banner]
    batch = []
    for i in range(prints):
        rank = i if distinct else i % gpus
        batch.append(shapes.env_line(rank, rank % gpus, world if world_size else None))
    lines += _interleaved(batch)
    lines += shapes.steps(30, 30)
    _write(out / "worker-0" / "launch_ddp.log", lines)
    (out / "job_status").write_text("succeeded\n")


def tracebacks_job(out: Path, count: int, gpus: int) -> None:
    shapes = Shapes()
    path = out / "worker-0" / "launch_ddp.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        head = [shapes.launch_line(1, 0, gpus), *shapes.banner]
        head += [shapes.env_line(local, local, gpus) for local in range(gpus)]
        head += shapes.steps(100, 1000)
        fh.write("\n".join(head) + "\n")
        blocks = [("\n".join(shapes.traceback(local, root=True)) + "\n") for local in range(gpus)]
        chunk = 10_000
        for start in range(0, count, chunk):
            fh.write("".join(blocks[i % gpus] for i in range(start, min(count, start + chunk))))
        fh.write("\n".join(shapes.agent_tail(0, 0, gpus, 0)) + "\n")
    (out / "job_status").write_text("failed\n")


def build(kind: str, out: Path, **opts) -> Path:
    """Write the job into `out` (a fresh directory) and return it."""
    if out.exists():
        shutil.rmtree(out)
    tmp = out.with_name(out.name + ".part")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    if kind == "workers":
        workers_job(tmp, opts["workers"], opts["lines"], opts["gpus"], opts.get("healthy", False))
    elif kind == "rendezvous":
        rendezvous_job(tmp, opts["workers"], opts["gpus"])
    elif kind == "shared":
        shared_job(tmp, opts["workers"], opts["lines"], opts["gpus"])
    elif kind == "env":
        env_job(tmp, opts["prints"], opts["gpus"], opts.get("distinct", False), opts.get("world_size", True))
    elif kind == "tracebacks":
        tracebacks_job(tmp, opts["tracebacks"], opts["gpus"])
    else:
        raise SystemExit(f"make_scale_logs: unknown kind {kind!r}")
    os.replace(tmp, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("workers", "rendezvous", "shared", "env", "tracebacks"))
    parser.add_argument("out", type=Path)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--lines", type=int, default=3100, help="lines per Worker log (workers), in all (shared)")
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--healthy", action="store_true")
    parser.add_argument("--prints", type=int, default=1_000_000)
    parser.add_argument("--distinct", action="store_true")
    parser.add_argument("--no-world-size", dest="world_size", action="store_false")
    parser.add_argument("--tracebacks", type=int, default=1_000_000)
    args = parser.parse_args()
    opts = vars(args).copy()
    kind, out = opts.pop("kind"), opts.pop("out")
    print(build(kind, out, **opts), file=sys.stderr)


if __name__ == "__main__":
    main()
