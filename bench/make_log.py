"""Build a large, realistic Worker launch log from the real sample logs' lines.

The log is what one Worker of a long 2-node job writes: the launch header and the interleaved env
prints of healthy-2x2, an NCCL start-up burst, millions of progress lines in the three styles the
samples show (plain `step i/n loss x`, tqdm through torchrun --tee, python logging behind
`kubectl logs --timestamps`), a c10d socket warning now and then, and near the end the crash of
world-size-leak: a training process's traceback followed by torchrun's own traceback and failure
summary.

Every line shape is taken from a sample file at run time: numbers in the real line become the
fields a template fills in, so the generated text stays as close to torchrun's as the samples are.

Usage: python bench/make_log.py SIZE OUT [--node-rank N]    (SIZE like 256M or 1G)
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_logs"
GENERATOR_VERSION = 3  # bump when the content changes, so cached logs are rebuilt

# NCCL_DEBUG=INFO start-up lines (the samples run gloo on CPU, so these follow NCCL's own format).
NCCL_INIT = (
    "worker-{node}:{pid}:{pid} [{local}] NCCL INFO Bootstrap : Using eth0:10.0.0.{host}<0>",
    "worker-{node}:{pid}:{pid} [{local}] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open "
    "shared object file: No such file or directory No plugin found (libnccl-net.so), using internal "
    "implementation",
    "worker-{node}:{pid}:{pid} [{local}] NCCL INFO cudaDriverVersion 12040",
    "NCCL version 2.21.5+cuda12.4",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.{host}<0>",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO Using network Socket",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO comm 0x55d4c8a0 rank {rank} nranks 4 cudaDev "
    "{local} nvmlDev {local} busId {bus}000 commId 0x3f2a1b7c9e0d4a11 - Init START",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO Channel 00/02 :    0   1   2   3",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO Channel 01/02 :    0   1   2   3",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO P2P Chunksize set to 131072",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO Connected all rings",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO Connected all trees",
    "worker-{node}:{pid}:{tid} [{local}] NCCL INFO comm 0x55d4c8a0 rank {rank} nranks 4 cudaDev "
    "{local} nvmlDev {local} busId {bus}000 commId 0x3f2a1b7c9e0d4a11 - Init COMPLETE",
)


def _sample_logs() -> dict[str, list[str]]:
    """Every sample log's lines, by path relative to sample_logs/."""
    logs = {}
    for path in sorted(SAMPLES.rglob("*")):
        rel = path.relative_to(SAMPLES).as_posix()
        if not path.is_file() or rel.startswith("generate/") or path.name in ("expected.json", "job_status"):
            continue
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        if b"DDP launch:" in data:
            logs[rel] = data.decode("utf-8", "replace").splitlines()
    if not logs:
        raise SystemExit(f"make_log: no sample logs under {SAMPLES}")
    return logs


def _first(logs: dict[str, list[str]], pattern: str) -> str:
    for lines in logs.values():
        for line in lines:
            if re.search(pattern, line):
                return line
    raise SystemExit(f"make_log: no sample line matches {pattern!r}; were the samples changed?")


def templatize(line: str) -> str:
    """A real line with every number turned into a `{}` field, braces in the text escaped."""
    escaped = line.replace("{", "{{").replace("}", "}}")
    return re.sub(r"\d+(?:\.\d+)?", "{}", escaped)


def _crash(logs: dict[str, list[str]]) -> list[str]:
    """A training process's traceback, then torchrun's own and its failure summary if a sample
    has them; else the first traceback of any sample."""
    tracebacks = []
    for lines in logs.values():
        for i, line in enumerate(lines):
            if not line.startswith("Traceback (most recent call last)"):
                continue
            end = next((j for j in range(i + 1, len(lines)) if not lines[j].startswith(" ")), None)
            if end is not None:
                tracebacks.append((lines[i:end + 1], lines[end + 1:]))
    if not tracebacks:
        raise SystemExit("make_log: no traceback in the samples")
    training = [t for t in tracebacks if not any("bin/torchrun" in l for l in t[0])]
    body, after = (training or tracebacks)[0]
    agent = next((i for i, l in enumerate(after) if "closing signal" in l or "(exitcode: " in l), None)
    return body + (after[agent:] if agent is not None else [])


class Sources:
    """The real lines every generated line is made from."""

    def __init__(self, node_rank: int):
        logs = _sample_logs()
        preferred = f"healthy-2x2/worker-{node_rank}/launch_ddp.log"
        lines = logs.get(preferred) or next(
            l for l in logs.values() if any(x.startswith("step ") for x in l))
        # Up to the last env print: the launch line, torchrun's banner, the env prints.
        last_env = max(i for i, l in enumerate(lines) if "RANK=" in l)
        self.header = lines[:last_env + 1]
        self.step = templatize(_first(logs, r"^step \d+/\d+ loss [\d.]+$"))
        # tqdm through torchrun --tee: edited field by field (the bar has no digits)
        self.tqdm = _first(logs, r"^\[default0\]:train: +\d+%\|.*it/s, loss=[\d.]+\]$")
        self.pylog = templatize(_first(
            logs, r"Z \d{4}-\d\d-\d\d [\d:,]+ - train - INFO - epoch \d+ iter \d+ loss"))
        self.c10d = [l for lines in logs.values() for l in lines if "[c10d]" in l][:8]
        if not self.c10d:
            raise SystemExit("make_log: no c10d warning in the samples")
        self.crash = _crash(logs)


def _tqdm_line(real: str, i: int, n: int, rate: str, loss: str) -> str:
    pct = 100 * i // n
    bar = "█" * (pct // 10) + "▋" * (pct % 10 >= 5) + " " * 10
    head = real[:real.index(":train:") + len(":train:")]
    return (f"{head} {pct:3d}%|{bar[:10]}| {i}/{n} [01:{i % 60:02d}<02:{(n - i) % 60:02d}, "
            f"{rate}it/s, loss={loss}]")


def generate(size: int, out: Path, node_rank: int = 0, seed: int = 7) -> Path:
    """Write about `size` bytes of log to `out` (atomically) and return it."""
    rng = random.Random(seed + node_rank)
    src = Sources(node_rank)
    losses = [f"{rng.gauss(1.4, 0.08):.4f}" for _ in range(997)]
    rates = [f"{rng.uniform(8.5, 12.0):5.2f}" for _ in range(101)]
    tmp = out.with_name(out.name + ".part")
    written = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        def put(lines):
            nonlocal written
            text = "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text.encode("utf-8")) if not text.isascii() else len(text)

        put(src.header)
        local = 0
        fields = dict(node=node_rank, pid=4242 + node_rank, tid=4300 + node_rank, local=local,
                      host=2 + node_rank, rank=2 * node_rank, bus=f"{1 + local:02x}")
        put([t.format(**fields) for t in NCCL_INIT])
        crash_at = int(size * 0.999)
        step = 0
        segment = 0
        batch = 4096
        total_steps = 10_000_000
        while written < crash_at:
            style = segment % 3
            segment += 1
            lines = []
            for _ in range(50):  # 50 batches of one style, then the next style
                base = step
                if style == 0:
                    tmpl = src.step
                    lines = [tmpl.format(base + k, total_steps, losses[(base + k) % 997])
                             for k in range(1, batch + 1)]
                elif style == 1:
                    lines = [_tqdm_line(src.tqdm, (base + k) % 5000 + 1, 5000, rates[(base + k) % 101],
                                        losses[(base + k) % 997]) for k in range(1, batch + 1)]
                else:
                    tmpl = src.pylog
                    lines = []
                    for k in range(1, batch + 1):
                        s = base + k
                        ns = (s * 7919) % 1_000_000_000
                        sec, minute, hour = s % 60, (s // 60) % 60, 18 + (s // 3600) % 6
                        hh, mm, ss = f"{hour:02d}", f"{minute:02d}", f"{sec:02d}"
                        lines.append(tmpl.format(
                            2026, 11, 29, hh, mm, f"{ss}.{ns:09d}",
                            2026, 11, 29, hh, mm, ss, f"{ns // 1_000_000:03d}",
                            s // 5000, s, losses[s % 997]))
                step += batch
                if step % (batch * 24) == 0:
                    lines.append(src.c10d[(step // batch) % len(src.c10d)])
                put(lines)
                if written >= crash_at:
                    break
        put(src.crash)
    os.replace(tmp, out)
    return out


def parse_size(text: str) -> int:
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)i?B?", text.strip(), re.I)
    if not found:
        raise argparse.ArgumentTypeError(f"bad size {text!r}: use e.g. 256M or 1G")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[found[2].upper()]
    return int(float(found[1]) * scale)


def cached_log(size: int, directory: Path, node_rank: int = 0) -> Path:
    """The generated log of this size, built once and kept for later runs."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"worker-{node_rank}-{size >> 20}M-v{GENERATOR_VERSION}.log"
    if not path.exists():
        print(f"building {path} ...", file=sys.stderr, flush=True)
        generate(size, path, node_rank)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", type=parse_size)
    parser.add_argument("out", type=Path)
    parser.add_argument("--node-rank", type=int, default=0, choices=(0, 1))
    args = parser.parse_args()
    generate(args.size, args.out, args.node_rank)


if __name__ == "__main__":
    main()
