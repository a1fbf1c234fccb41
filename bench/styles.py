"""Big Worker logs in the styles real training jobs print, for bench/run_bench.py.

Each style is one Worker's log: the launch header and env prints of the healthy-2x2 sample, the
training output of one kind of job, and near the end the crash of make_log.py (a traceback,
torchrun's own, its failure summary). The training output is written as those tools print it:

- bench: the benchmark's own mixed log (make_log.py): plain steps, tqdm through --tee,
  python logging behind `kubectl logs --timestamps`;
- pylogging: python `logging` with the default-ish `%(asctime)s %(levelname)s %(name)s:` format
  and key=value metrics (`step N/M loss=... grad_norm=... tokens/s=... mem=41.2GiB`);
- nccl-tqdm: an NCCL_DEBUG=INFO start-up burst for 8 local ranks, then a Hugging Face Trainer
  tqdm bar redrawn with `\\r` (one file line per logging step holds ten redraws, tqdm.write's
  clearing and the `{'loss': ...}` dict);
- warnings: a UserWarning/FutureWarning pair (and the source lines Python's warnings module
  prints under them) before every step line;
- megatron: Megatron-LM's `iteration N/ M | consumed samples: ... | lm loss: ...` lines;
- kubectl-rank: `kubectl logs --timestamps` over python logging with a `[rank 0]` field and
  English step text (`step time`, `data time`) on every line;
- the frameworks' styles of styles_frameworks.py (DeepSpeed, Lightning's tqdm and rich bars,
  Hugging Face Trainer, Accelerate, torchtitan, mmengine, NeMo, fairseq, detectron2, JSON
  logging, rank-prefixed warnings, handled tracebacks, the CRI and Docker json-file wrappers),
  each written from the source that prints it;
- crlf: the pylogging style with CRLF line ends;
- adversarial (adversarial.py): ordinary lines holding every keyword of the catalogue, read from
  it at bench time, that match no pattern;
- optimizer-step: a step line quoting `optimizer.step()` with the step number, every step;
- exception-warning: an exception-shaped `Name: text` line (a handled error printed by the
  script) before every step line, its numbers varying;
- short-lines: empty and one-word lines, a step line every hundred steps;
- gzip-newlines: nothing but newlines, gzip-compressed (SIZE is the decompressed size).

Usage: python bench/styles.py STYLE SIZE OUT
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_log import Sources, generate as generate_bench, parse_size  # noqa: E402
from styles_frameworks import FRAMEWORK_STYLES, crlf  # noqa: E402

GENERATOR_VERSION = 4  # bump when the content changes, so cached logs are rebuilt
BATCH = 2000  # steps per batch of lines


def _time(step: int) -> tuple[str, str, str, int]:
    """(hh, mm, ss, ms) of a step, about 0.4 s apart, from 18:00."""
    ms_total = step * 412
    sec = ms_total // 1000
    return (f"{18 + sec // 3600 % 6:02d}", f"{sec // 60 % 60:02d}", f"{sec % 60:02d}",
            ms_total % 1000)


def pylogging(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.1, 0.1):.4f}" for _ in range(997)]
    norms = [f"{rng.uniform(0.4, 1.6):.4f}" for _ in range(101)]
    tps = [str(rng.randint(175_000, 190_000)) for _ in range(89)]
    total = 500_000
    yield ["2026-11-29 17:59:58,101 INFO train: model has 1.3B parameters, 24 layers, "
           "hidden size 2048",
           "2026-11-29 17:59:58,388 INFO train: training for 500000 steps, global batch size 512, "
           "warmup 2000 steps, cosine decay to 3.0e-05"]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            hh, mm, ss, ms = _time(s)
            lines.append(
                f"2026-11-29 {hh}:{mm}:{ss},{ms:03d} INFO train: step {s}/{total} "
                f"loss={losses[s % 997]} grad_norm={norms[s % 101]} lr=2.9e-04 "
                f"tokens/s={tps[s % 89]} mem=41.2GiB")
            if s % 1000 == 0:
                lines.append(f"2026-11-29 {hh}:{mm}:{ss},{ms:03d} INFO train: eval at step {s}: "
                             f"val_loss={losses[s % 997]} ppl=8.31 took 41.7 s")
                lines.append(f"2026-11-29 {hh}:{mm}:{ss},{ms:03d} INFO checkpoint: saving "
                             f"checkpoint to /ckpt/run-17/step-{s} (time since last save 412 s)")
        step += BATCH
        yield lines


def _nccl_burst(node_rank: int) -> list[str]:
    """NCCL_DEBUG=INFO start-up of 8 local ranks, as NCCL 2.21 prints it."""
    lines = []
    host = f"gpu-node-{node_rank:02d}"
    for local in range(8):
        rank = 8 * node_rank + local
        pid = 31_400 + local
        head = f"{host}:{pid}:{pid} [{local}] NCCL INFO"
        tid = f"{host}:{pid}:{pid + 93} [{local}] NCCL INFO"
        lines += [
            f"{head} Bootstrap : Using eth0:10.42.{node_rank}.{17 + local}<0>",
            f"{head} NET/Plugin: No plugin found (libnccl-net.so)",
            f"{head} NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared "
            f"object file: No such file or directory : when loading libnccl-net.so",
            f"{head} cudaDriverVersion 12040",
            f"{head} NCCL_SOCKET_IFNAME set by environment to eth0",
            f"{tid} NET/IB : No device found.",
            f"{tid} NET/Socket : Using [0]eth0:10.42.{node_rank}.{17 + local}<0>",
            f"{tid} Using non-device net plugin version 0",
            f"{tid} Using network Socket",
            f"{tid} ncclCommInitRank comm 0x5581f2c0 rank {rank} nranks 16 cudaDev {local} "
            f"nvmlDev {local} busId {0x18 + 0x10 * local:x}000 commId 0x7d21c4a9e3f01b56 - Init START",
            f"{tid} Setting affinity for GPU {local} to ffffff,ff000000,00ffffff",
            f"{tid} comm 0x5581f2c0 rank {rank} nRanks 16 nNodes 2 localRanks 8 localRank {local} "
            f"MNNVL 0",
        ]
        for channel in range(16):
            lines.append(f"{tid} Channel {channel:02d}/16 :    0   1   2   3   4   5   6   7   "
                         f"8   9  10  11  12  13  14  15")
        lines += [
            f"{tid} Trees [0] {rank + 1}/-1/-1->{rank}->{max(rank - 1, -1)} "
            f"[1] {rank + 1}/-1/-1->{rank}->{max(rank - 1, -1)}",
            f"{tid} P2P Chunksize set to 524288",
        ]
        for channel in range(16):
            lines.append(f"{tid} Channel {channel:02d}/0 : {rank}[{local}] -> {(rank + 1) % 16}"
                         f"[{(local + 1) % 8}] via P2P/CUMEM/read")
        lines += [
            f"{tid} Connected all rings",
            f"{tid} Connected all trees",
            f"{tid} threadThresholds 8/8/64 | 128/8/64 | 512 | 512",
            f"{tid} 16 coll channels, 16 collnet channels, 0 nvls channels, 16 p2p channels, "
            f"16 p2p channels per peer",
            f"{tid} TUNER/Plugin: Plugin load returned 2 : libnccl-tuner.so: cannot open shared "
            f"object file: No such file or directory : when loading libnccl-tuner.so",
            f"{tid} TUNER/Plugin: Using internal tuner plugin.",
            f"{tid} ncclCommInitRank comm 0x5581f2c0 rank {rank} nranks 16 cudaDev {local} "
            f"nvmlDev {local} busId {0x18 + 0x10 * local:x}000 commId 0x7d21c4a9e3f01b56 - "
            f"Init COMPLETE",
            f"{tid} Init timings: rank {rank} nranks 16 total 1.21 (kernels 0.19, bootstrap 0.62, "
            f"allgathers 0.01, topo 0.21, graphs 0.02, connections 0.15, rest 0.01)",
        ]
    return lines


def nccl_tqdm(rng: random.Random, node_rank: int):
    yield _nccl_burst(node_rank)
    losses = [f"{rng.gauss(1.9, 0.1):.4f}" for _ in range(997)]
    rates = [f"{rng.uniform(1.6, 1.9):.2f}" for _ in range(101)]
    total = 100_000
    clear = "\r" + " " * 80 + "\r"
    step = 0
    while True:
        lines = []
        for s in range(step + 10, step + BATCH + 1, 10):  # Trainer logging_steps=10
            bar = []
            for k in range((s - 10) % total + 1, (s - 10) % total + 11):  # an epoch, then the next
                pct = 100 * k // total
                fill = "█" * (pct // 10) + " " * (10 - pct // 10)
                left = (total - k) * 57 // 100
                bar.append(f"\r{pct:3d}%|{fill}| {k}/{total} [{k // 3600:d}:{k // 60 % 60:02d}:"
                           f"{k % 60:02d}<{left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}, "
                           f" {rates[k % 101]}it/s]")
            lines.append("".join(bar) + clear +
                         f"{{'loss': {losses[s % 997]}, 'grad_norm': 0.{s % 9973:04d}, "
                         f"'learning_rate': 4.{s % 97:02d}e-05, 'epoch': {s / total:.2f}}}")
        step += BATCH
        yield lines


WARNING_PAIR = (
    "/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:464: UserWarning: "
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version "
    "2.4 we will raise an exception if use_reentrant is not passed. use_reentrant=False is "
    "recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two "
    "variants.",
    "  return fn(*args, **kwargs)",
    "/workspace/train.py:141: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. "
    "Please use `torch.amp.autocast('cuda', args...)` instead.",
    "  with torch.cuda.amp.autocast(dtype=torch.bfloat16):",
)


def warnings(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(1.4, 0.08):.4f}" for _ in range(997)]
    total = 1_000_000
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines += WARNING_PAIR
            lines.append(f"step {s}/{total} loss {losses[s % 997]}")
        step += BATCH
        yield lines


def megatron(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.3, 0.1):.6E}" for _ in range(997)]
    norms = [f"{rng.uniform(0.5, 1.5):.3f}" for _ in range(101)]
    elapsed = [f"{rng.gauss(1234.0, 20):.1f}" for _ in range(89)]
    total = 500_000
    yield ["> building GPT model ...",
           " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 1311263744",
           "[after model, optimizer, and learning rate scheduler are built] datetime: "
           "2026-11-29 17:59:58",
           "training ..."]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            hh, mm, ss, _ = _time(s)
            lines.append(
                f" [2026-11-29 {hh}:{mm}:{ss}] iteration {s:8d}/{total:8d} | consumed samples: "
                f"{512 * s:12d} | elapsed time per iteration (ms): {elapsed[s % 89]} | "
                f"throughput per GPU (TFLOP/s/GPU): 187.4 | learning rate: 2.999{s % 97:02d}E-04 | "
                f"global batch size:   512 | lm loss: {losses[s % 997]} | loss scale: 1.0 | "
                f"grad norm: {norms[s % 101]} | number of skipped iterations:   0 | "
                f"number of nan iterations:   0 |")
            if s % 1000 == 0:
                lines.append("-" * 100)
                lines.append(f" validation loss at iteration {s} | lm loss value: "
                             f"{losses[(s + 1) % 997]} | lm loss PPL: 9.971E+00 | ")
                lines.append("-" * 100)
                lines.append(f"saving checkpoint at iteration {s:8d} to /ckpt/gpt-1.3b")
                lines.append(f"  successfully saved checkpoint at iteration {s:8d} to /ckpt/gpt-1.3b")
        step += BATCH
        yield lines


def kubectl_rank(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(1.7, 0.1):.4f}" for _ in range(997)]
    steps = [f"{rng.uniform(0.38, 0.45):.3f}" for _ in range(101)]
    total = 400_000
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            hh, mm, ss, ms = _time(s)
            ns = (s * 7919) % 1_000_000
            stamp = f"2026-11-29T{hh}:{mm}:{ss}.{ms:03d}{ns:06d}Z"
            prefix = f"{stamp} 2026-11-29 {hh}:{mm}:{ss},{ms:03d} [rank 0] INFO trainer.py:412"
            lines.append(f"{prefix} - epoch 3 step {s}/{total} | loss {losses[s % 997]} | "
                         f"lr 2.9e-04 | step time {steps[s % 101]} s | data time 0.011 s | "
                         f"host mem 61.2 GiB")
            if s % 50 == 0:
                lines.append(f"{prefix} - rank 0 throughput is 1250.3 samples/s, elapsed time "
                             f"{s * 0.412:.1f} s, eta 41:12:03")
        step += BATCH
        yield lines


def keyword_steps(rng: random.Random, node_rank: int):
    """Step lines that hold built-in keywords on every step, as a script's own timers and eval
    print them: `backward=0.05s` (training-frame's `backward`), `optimizer.step=0.01s`, and
    `val error: 0.1` (error-line's `error: `) every tenth step; `loss=` on every line, the
    common word a user's --progress-pattern or keyword may pick. No line matches a rule."""
    losses = [f"{rng.gauss(2.1, 0.1):.4f}" for _ in range(997)]
    times = [f"{rng.uniform(0.03, 0.07):.3f}" for _ in range(101)]
    total = 500_000
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            hh, mm, ss, ms = _time(s)
            stamp = f"2026-11-29 {hh}:{mm}:{ss},{ms:03d}"
            lines.append(
                f"{stamp} INFO train: step {s}/{total} loss={losses[s % 997]} "
                f"forward={times[s % 101]}s backward={times[(s + 7) % 101]}s "
                f"optimizer.step={times[(s + 3) % 101]}s data=0.002s")
            if s % 10 == 0:
                lines.append(f"{stamp} INFO eval: step {s} val error: 0.{s % 97:02d} "
                             f"val loss={losses[(s + 1) % 997]}")
        step += BATCH
        yield lines


def optimizer_step(rng: random.Random, node_rank: int):
    """A step line that quotes `optimizer.step()`, the step number varying, every step: a
    script's own timer (`optimizer.step() #N took 0.012s`). No line matches a rule: the body
    does not start with the call, as training-frame's pattern (a traceback's source line) asks."""
    from styles_frameworks import _asctime

    losses = [f"{rng.gauss(2.1, 0.1):.4f}" for _ in range(997)]
    times = [f"{rng.uniform(0.005, 0.02):.3f}" for _ in range(101)]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines.append(f"{_asctime(s)} INFO train: step {s}/500000 loss={losses[s % 997]} "
                         f"optimizer.step() #{s} took {times[s % 101]}s")
        step += BATCH
        yield lines


def exception_warning(rng: random.Random, node_rank: int):
    """An exception-shaped `Name: text` line every step, as a data loader prints what it caught
    and handled (`print(f"{type(e).__name__}: {e}")`), its numbers varying, then the step line."""
    from styles_frameworks import _asctime

    losses = [f"{rng.gauss(2.1, 0.1):.4f}" for _ in range(997)]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines.append(f"ShardReadError: shard {s % 512:05d} was short ({480 + s % 32} of 512 "
                         f"samples), padded and skipped at step {s}")
            lines.append(f"{_asctime(s)} INFO train: step {s}/500000 loss={losses[s % 997]}")
        step += BATCH
        yield lines


def short_lines(rng: random.Random, node_rank: int):
    """Empty and short lines: a script that prints blank lines and single words between rare
    step lines (a progress dot, `ok`, a separator)."""
    words = ["", "", "ok", "", ".", "x y", "", "--", "", "done"]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines += [words[(s + i) % len(words)] for i in range(40)]
            if s % 100 == 0:
                lines.append(f"step {s}/500000 loss 2.{s % 1000:03d}")
        step += BATCH
        yield lines


def newlines(rng: random.Random, node_rank: int):
    """Empty lines only: a script that printed nothing but newlines."""
    while True:
        yield [""] * (BATCH * 50)


def adversarial(rng: random.Random, node_rank: int):
    from adversarial import adversarial as lines  # reads the catalogue: only when asked for

    return lines(rng, node_rank)


# style name → (training output, wrapper: lines → text, or None for "\n" line ends)
STYLES = {"pylogging": (pylogging, None), "nccl-tqdm": (nccl_tqdm, None),
          "warnings": (warnings, None), "megatron": (megatron, None),
          "kubectl-rank": (kubectl_rank, None),
          **FRAMEWORK_STYLES,
          # python logging (the pylogging style) with CRLF line ends
          "crlf": (pylogging, crlf),
          "keyword-steps": (keyword_steps, None),
          "adversarial": (adversarial, None),
          "optimizer-step": (optimizer_step, None),
          "exception-warning": (exception_warning, None),
          "short-lines": (short_lines, None),
          # nothing but newlines between the header and the crash, gzip-compressed (generate):
          # SIZE is the size once decompressed
          "gzip-newlines": (newlines, None)}
GZIPPED = {"gzip-newlines"}
ALL = ("bench", *STYLES)


def generate(style: str, size: int, out: Path, node_rank: int = 0, seed: int = 11) -> Path:
    """Write about `size` bytes of a `style` log to `out` (atomically) and return it."""
    if style == "bench":
        return generate_bench(size, out, node_rank)
    src = Sources(node_rank)
    rng = random.Random(seed + node_rank)
    tmp = out.with_name(out.name + ".part")
    written = 0
    crash_at = int(size * 0.999)
    output, wrap = STYLES[style]
    state: dict = {}
    with _opened(tmp, style in GZIPPED) as fh:
        def put(lines):
            nonlocal written
            text = wrap(lines, state) if wrap else "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text) if text.isascii() else len(text.encode("utf-8"))

        put(src.header)
        for lines in output(rng, node_rank):
            put(lines)
            if written >= crash_at:
                break
        put(src.crash)
    os.replace(tmp, out)
    return out


def _opened(path: Path, gzipped: bool):
    if gzipped:
        import gzip

        return gzip.open(path, "wt", encoding="utf-8", newline="\n", compresslevel=6)
    return open(path, "w", encoding="utf-8", newline="\n")


def cached_log(style: str, size: int, directory: Path, node_rank: int = 0) -> Path:
    """The generated log of this style and size, built once and kept for later runs."""
    if style == "bench":
        from make_log import cached_log as cached_bench

        return cached_bench(size, directory, node_rank)
    directory.mkdir(parents=True, exist_ok=True)
    tag = ""
    if style == "adversarial":  # the catalogue's words of today: a changed rule builds it again
        import hashlib

        from adversarial import quiet_lines

        tag = "-" + hashlib.sha256("\n".join(quiet_lines()[0]).encode()).hexdigest()[:10]
    suffix = ".log.gz" if style in GZIPPED else ".log"
    path = directory / f"{style}-worker-{node_rank}-{size >> 20}M-v{GENERATOR_VERSION}{tag}{suffix}"
    if not path.exists():
        print(f"building {path} ...", file=sys.stderr, flush=True)
        generate(style, size, path, node_rank)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("style", choices=ALL)
    parser.add_argument("size", type=parse_size)
    parser.add_argument("out", type=Path)
    parser.add_argument("--node-rank", type=int, default=0, choices=(0, 1))
    args = parser.parse_args()
    generate(args.style, args.size, args.out, args.node_rank)


if __name__ == "__main__":
    main()
