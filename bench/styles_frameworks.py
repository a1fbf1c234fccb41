"""Training output in the styles of the frameworks users run, for bench/styles.py.

Each generator yields lists of lines (the first list may be a framework's start-up), forever;
styles.generate frames them with the healthy-2x2 launch header and env prints, stops at the
requested size and appends the crash. Each is written from the source that prints it: the
repository and file are named beside it. Numbers vary through small precomputed tables (as in
styles.py), so a line body rarely repeats exactly, as in a real log.

Wrappers (CRLF line ends, the CRI and Docker json-file container formats) are applied by
styles.generate to the whole file, header and crash included: that is how a collector stores it.
"""

from __future__ import annotations

import json
import random

BATCH = 2000  # steps per list of lines


def _clock(step: int, ms_per_step: int = 412) -> tuple[int, int, int, int]:
    """(h, m, s, ms) of a step from 18:00, wrapping at 24 h."""
    total = step * ms_per_step
    sec = total // 1000
    return (18 + sec // 3600) % 24, sec // 60 % 60, sec % 60, total % 1000


def _asctime(step: int) -> str:
    """python logging's default asctime: `2026-11-29 18:00:01,234`."""
    h, m, s, ms = _clock(step)
    return f"2026-11-29 {h:02d}:{m:02d}:{s:02d},{ms:03d}"


def _hms(seconds: int) -> str:
    """tqdm's format_interval: `05:30`, `1:56:43`."""
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def _eta(seconds: int) -> str:
    """str(datetime.timedelta(seconds=N)): `1 day, 2:03:04`, `0:12:34`."""
    days, rest = divmod(seconds, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    text = f"{h:d}:{m:02d}:{s:02d}"
    return f"{days} day{'s' if days > 1 else ''}, {text}" if days else text


_TQDM_EIGHTHS = " ▏▎▍▌▋▊▉"


def _tqdm_bar(n: int, total: int, width: int = 10) -> str:
    """tqdm's Bar with its default 10 columns when ncols is unknown (a file): full blocks and one
    eighth-block (tqdm/std.py, Bar.__format__)."""
    frac = n / total
    full, part = divmod(int(frac * width * 8), 8)
    bar = "█" * full
    if full < width:
        bar += _TQDM_EIGHTHS[part] + " " * (width - full - 1)
    return bar


def _tqdm(desc: str, n: int, total: int, elapsed: int, rate: str, postfix: str = "") -> str:
    """tqdm.format_meter's default bar_format, `{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<
    {remaining}, {rate_fmt}{postfix}]` (tqdm/tqdm, tqdm/std.py), `desc: ` before it when set."""
    pct = 100 * n // total
    remaining = int((total - n) / max(float(rate), 0.01))
    head = f"{desc}: " if desc else ""
    return (f"{head}{pct:3d}%|{_tqdm_bar(n, total)}| {n}/{total} [{_hms(elapsed)}<"
            f"{_hms(remaining)}, {float(rate):5.2f}it/s{postfix}]")


# --- DeepSpeed ZeRO-3 -------------------------------------------------------------------------
# microsoft/DeepSpeed deepspeed/utils/logging.py: LoggerFactory.create_logger's format
# "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s" and log_dist,
# which prefixes "[Rank {}] "; deepspeed/runtime/engine.py DeepSpeedEngine._report_progress
# (`step=..., skipped=..., lr=..., mom=...` every steps_per_print); deepspeed/utils/timer.py
# SynchronizedWallClockTimer.log (`time (ms) | fwd_microstep: ...`, wall_clock_breakdown);
# deepspeed/runtime/zero/stage3.py DeepSpeedZeroOptimizer_Stage3.step's allocator-cache warning;
# deepspeed/runtime/zero/partitioned_param_coordinator.py trace_prologue's print_rank_0
# "Invalidate trace cache @ step ...".

def deepspeed(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.2, 0.1):.4f}" for _ in range(997)]
    fwd = [f"{rng.gauss(410.0, 8):.2f}" for _ in range(89)]
    total = 200_000

    def ds(step: int, level: str, where: str, msg: str) -> str:
        return f"[{_asctime(step)}] [{level}] [{where}] {msg}"

    yield [
        ds(0, "INFO", "real_accelerator.py:219:get_accelerator",
           "Setting ds_accelerator to cuda (auto detect)"),
        ds(0, "INFO", "comm.py:652:init_distributed", "cdb=None"),
        ds(0, "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed info: version=0.16.4, "
           "git-hash=unknown, git-branch=unknown"),
        ds(0, "INFO", "config.py:733:__init__", "Config mesh_device None world_size = 16"),
        ds(0, "INFO", "logging.py:128:log_dist", "[Rank 0] Creating ZeRO stage 3 optimizer"),
        ds(0, "INFO", "utils.py:781:see_memory_usage", "Stage 3 initialize beginning"),
        ds(0, "INFO", "utils.py:782:see_memory_usage", "MA 2.61 GB         Max_MA 2.61 GB         "
           "CA 2.63 GB         Max_CA 3 GB "),
        ds(0, "INFO", "stage3.py:130:__init__", "Reduce bucket size 16777216"),
        ds(0, "INFO", "stage3.py:131:__init__", "Prefetch bucket size 15099494"),
        ds(0, "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed Final Optimizer = "
           "DeepSpeedZeroOptimizer_Stage3"),
        ds(0, "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed using configured LR "
           "scheduler = WarmupDecayLR"),
    ]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines.append(f"epoch 0 step {s}/{total} loss {losses[s % 997]}")
            if s % 10 == 0:  # steps_per_print: 10
                lines.append(ds(s, "INFO", "logging.py:128:log_dist",
                                f"[Rank 0] step={s}, skipped=0, lr=[2.9{s % 97:02d}e-05], "
                                f"mom=[(0.9, 0.95)]"))
                lines.append(ds(s, "INFO", "logging.py:128:log_dist",
                                f"[Rank 0] time (ms) | fwd_microstep: {fwd[s % 89]} | "
                                f"bwd_microstep: 812.{s % 89:02d} | bwd_inner_microstep: 801.47 | "
                                f"bwd_allreduce_microstep: 10.{s % 83:02d} | step_microstep: "
                                f"41.{s % 79:02d}"))
            if s % 50 == 0:
                lines.append(ds(s, "WARNING", "stage3.py:2171:step",
                                "4 pytorch allocator cache flushes since last step. this happens "
                                "when there is high memory pressure and is detrimental to "
                                "performance. if this is happening frequently consider adjusting "
                                "settings to reduce memory consumption. If you are unable to make "
                                "the cache flushes go away consider adding "
                                "get_accelerator().empty_cache() calls in your training loop to "
                                "ensure that all ranks flush their caches at the same time"))
            if s % 100 == 0:
                lines.append(f"Invalidate trace cache @ step 0 and module {s % 1471}: cache has "
                             f"only 0 modules")
        step += BATCH
        yield lines


# --- Lightning, TQDMProgressBar written to a file ------------------------------------------------
# Lightning-AI/pytorch-lightning src/lightning/pytorch/callbacks/progress/tqdm_progress.py
# (TQDMProgressBar: desc "Epoch N", the train bar redrawn every batch (refresh_rate=1), the
# postfix `v_num=.., train_loss=..` from get_metrics; a "Validation DataLoader 0" bar). A file is
# not a terminal: tqdm writes each redraw after a `\r`, so an epoch is one very long file line.

def lightning_tqdm(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.3, 0.1):.3f}" for _ in range(997)]
    rates = [f"{rng.uniform(1.30, 1.45):.2f}" for _ in range(101)]
    per_epoch, val = 500, 50
    yield ["GPU available: True (cuda), used: True",
           "TPU available: False, using: 0 TPU cores",
           "HPU available: False, using: 0 HPUs",
           "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]",
           "",
           "  | Name  | Type | Params | Mode ",
           "-----------------------------------------",
           "0 | model | GPT  | 1.3 B  | train",
           "-----------------------------------------",
           "1.3 B     Trainable params",
           "0         Non-trainable params",
           "1.3 B     Total params",
           "5,245.055 Total estimated model params size (MB)"]
    epoch = 0
    while True:
        lines = []
        for _ in range(4):
            parts = []
            for n in range(1, per_epoch + 1):
                loss = losses[(epoch * per_epoch + n) % 997]
                parts.append("\r" + _tqdm(f"Epoch {epoch}", n, per_epoch, int(n / 1.37),
                                          rates[n % 101], f", v_num=12, train_loss={loss}"))
            for n in range(1, val + 1):
                parts.append("\r" + _tqdm("Validation DataLoader 0", n, val, n // 9, "9.71"))
            parts.append("\r" + _tqdm(f"Epoch {epoch}", per_epoch, per_epoch, int(per_epoch / 1.37),
                                      "1.37", f", v_num=12, train_loss={loss}, val_loss=2.291"))
            lines.append("".join(parts))
            epoch += 1
        yield lines


# --- Lightning, RichProgressBar written to a file -----------------------------------------------
# Lightning-AI/pytorch-lightning src/lightning/pytorch/callbacks/progress/rich_progress.py
# (RichProgressBar: description "Epoch N/M", CustomBarColumn, BatchesProcessedColumn "n/total",
# CustomTimeColumn "elapsed • remaining", ProcessingSpeedColumn "x.xxit/s", MetricsTextColumn
# "v_num: 12 train_loss: 2.310"), refreshed through rich's Live: Textualize/rich rich/live_render.py
# LiveRender.position_cursor, `\r` and erase-line `\x1b[2K` before each redraw, colours as SGR
# codes. A container runtime gives the process a terminal (tty: true), so rich draws as on one.

_RICH_BAR = "━"


def lightning_rich(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.3, 0.1):.3f}" for _ in range(997)]
    rates = [f"{rng.uniform(1.30, 1.45):.2f}" for _ in range(101)]
    per_epoch, width = 400, 40
    yield ["\x1b[?25l┏━━━┳━━━━━━━┳━━━━━━┳━━━━━━━━┳━━━━━━━┓",
           "┃   ┃ Name  ┃ Type ┃ Params ┃ Mode  ┃",
           "┡━━━╇━━━━━━━╇━━━━━━╇━━━━━━━━╇━━━━━━━┩",
           "│ 0 │ model │ GPT  │  1.3 B │ train │",
           "└───┴───────┴──────┴────────┴───────┘",
           "\x1b[1mTrainable params\x1b[0m: 1.3 B",
           "\x1b[1mNon-trainable params\x1b[0m: 0",
           "\x1b[1mTotal params\x1b[0m: 1.3 B"]
    epoch = 0
    while True:
        lines = []
        for _ in range(4):
            parts = []
            for n in range(1, per_epoch + 1):
                done = width * n // per_epoch
                bar = (f"\x1b[38;2;249;38;114m{_RICH_BAR * done}\x1b[0m"
                       f"\x1b[38;5;237m{_RICH_BAR * (width - done)}\x1b[0m")
                el, left = int(n / 1.37), int((per_epoch - n) / 1.37)
                parts.append(
                    f"\r\x1b[2KEpoch {epoch}/99 {bar} {n}/{per_epoch} "
                    f"\x1b[2m{el // 3600}:{el // 60 % 60:02d}:{el % 60:02d} • "
                    f"{left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}\x1b[0m "
                    f"\x1b[2m{rates[n % 101]}it/s\x1b[0m \x1b[2mv_num: 12 train_loss: "
                    f"{losses[(epoch * per_epoch + n) % 997]}\x1b[0m")
            lines.append("".join(parts))
            epoch += 1
        yield lines


# --- Hugging Face Trainer, disable_tqdm=True --------------------------------------------------
# huggingface/transformers src/transformers/trainer_callback.py PrinterCallback.on_log (the logs
# dict printed as `{'loss': ..., 'grad_norm': ..., 'learning_rate': ..., 'epoch': ...}` each
# logging step), src/transformers/trainer.py Trainer._inner_training_loop's "***** Running
# training *****" block and _save_checkpoint's "Saving model checkpoint to", in the examples'
# explicit format from src/transformers/utils/logging.py enable_explicit_format:
# "[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s".

def hf_trainer(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(1.9, 0.1):.4f}" for _ in range(997)]
    norms = [f"{rng.uniform(0.3, 1.9):.13f}" for _ in range(101)]
    total = 300_000

    def tf(step: int, where: str, msg: str, level: str = "INFO") -> str:
        return f"[{level}|{where}] {_asctime(step)} >> {msg}"

    yield [tf(0, "trainer.py:2369", "***** Running training *****"),
           tf(0, "trainer.py:2370", "  Num examples = 153,600,000"),
           tf(0, "trainer.py:2371", "  Num Epochs = 1"),
           tf(0, "trainer.py:2372", "  Instantaneous batch size per device = 32"),
           tf(0, "trainer.py:2375", "  Total train batch size (w. parallel, distributed & "
                                    "accumulation) = 512"),
           tf(0, "trainer.py:2376", "  Gradient Accumulation steps = 1"),
           tf(0, "trainer.py:2377", f"  Total optimization steps = {total:,}"),
           tf(0, "trainer.py:2378", "  Number of trainable parameters = 1,311,263,744")]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines.append(f"{{'loss': {losses[s % 997]}, 'grad_norm': {norms[s % 101]}, "
                         f"'learning_rate': {4.99 - s * 1e-5:.4f}e-05, 'epoch': {s / total:.4g}}}")
            if s % 1000 == 0:
                lines += [tf(s, "trainer.py:4226", "***** Running Evaluation *****"),
                          tf(s, "trainer.py:4228", "  Num examples = 20000"),
                          tf(s, "trainer.py:4231", "  Batch size = 32"),
                          f"{{'eval_loss': {losses[(s + 7) % 997]}, 'eval_runtime': 41.73, "
                          f"'eval_samples_per_second': 479.271, 'eval_steps_per_second': 0.958, "
                          f"'epoch': {s / total:.4g}}}",
                          tf(s, "trainer.py:3910", f"Saving model checkpoint to "
                                                   f"/ckpt/run-17/checkpoint-{s}"),
                          tf(s, "configuration_utils.py:420", f"Configuration saved in "
                                                              f"/ckpt/run-17/checkpoint-{s}/config.json"),
                          tf(s, "modeling_utils.py:3042", f"Model weights saved in "
                                                          f"/ckpt/run-17/checkpoint-{s}/model.safetensors")]
        step += BATCH
        yield lines


# --- Accelerate -------------------------------------------------------------------------------
# huggingface/accelerate src/accelerate/logging.py get_logger / MultiProcessAdapter (a logger of
# the script's own format; the no_trainer examples, e.g. huggingface/transformers
# examples/pytorch/language-modeling/run_clm_no_trainer.py, set "%(asctime)s - %(levelname)s -
# %(name)s - %(message)s" with datefmt "%m/%d/%Y %H:%M:%S"), src/accelerate/state.py
# PartialState.__repr__ ("Distributed environment: ..."), src/accelerate/accelerator.py
# save_state ("Saving current state to ...") and src/accelerate/checkpointing.py
# save_accelerator_state ("Model weights saved in ..."); the examples' tqdm bar on the local main
# process, each redraw after a `\r`.

def accelerate(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.0, 0.1):.4f}" for _ in range(997)]
    rates = [f"{rng.uniform(2.3, 2.6):.2f}" for _ in range(101)]
    total = 100_000

    def al(step: int, name: str, msg: str) -> str:
        h, m, s, _ = _clock(step)
        return f"11/29/2026 {h:02d}:{m:02d}:{s:02d} - INFO - {name} - {msg}"

    yield [al(0, "__main__", "Distributed environment: MULTI_GPU  Backend: nccl"),
           "Num processes: 16",
           "Process index: 0",
           "Local process index: 0",
           "Device: cuda:0",
           "",
           "Mixed precision type: bf16",
           "",
           al(0, "__main__", "***** Running training *****"),
           al(0, "__main__", "  Num examples = 51200000"),
           al(0, "__main__", f"  Total optimization steps = {total}")]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            n = s % total
            lines.append("\r" + _tqdm("", n, total, int(n / 2.45), rates[s % 101]) +
                         "\r" + " " * 60 + "\r" +
                         al(s, "__main__", f"epoch 0 step {s}: loss {losses[s % 997]} lr "
                                           f"{2.9 - s * 1e-6:.5f}e-04"))
            if s % 1000 == 0:
                lines += [al(s, "accelerate.accelerator", f"Saving current state to "
                                                          f"/ckpt/run-17/step_{s}"),
                          al(s, "accelerate.checkpointing", f"Model weights saved in "
                                                            f"/ckpt/run-17/step_{s}/model.safetensors"),
                          al(s, "accelerate.checkpointing", f"Optimizer state saved in "
                                                            f"/ckpt/run-17/step_{s}/optimizer.bin"),
                          al(s, "__main__", f"epoch 0 step {s}: perplexity: 7.41 eval_loss: "
                                            f"{losses[(s + 3) % 997]}")]
        step += BATCH
        yield lines


# --- torchtitan -------------------------------------------------------------------------------
# pytorch/torchtitan torchtitan/tools/logging.py init_logger ("[titan] %(asctime)s - %(name)s -
# %(levelname)s - %(message)s"), torchtitan/components/metrics.py MetricsProcessor.log (`step:
# loss: grad_norm: memory: tps: tflops: mfu:` between the Color codes of
# torchtitan/tools/utils.py), run_train.sh's `torchrun --local-ranks-filter 0 --role rank --tee 3`
# (the `[rank0]:` prefix), torchtitan/components/checkpoint.py CheckpointManager.save. Colour is on
# unless --metrics.disable_color_printing (its default is False).

def torchtitan(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(3.1, 0.2):8.5f}" for _ in range(997)]
    norms = [f"{rng.uniform(0.2, 1.4):7.4f}" for _ in range(101)]
    tps = [f"{rng.randint(6200, 6600):,}" for _ in range(89)]
    red, green, orange, turq, blue, cyan, magenta, reset = (
        "\x1b[31m", "\x1b[32m", "\x1b[38;2;180;60;0m", "\x1b[38;2;54;234;195m", "\x1b[34m",
        "\x1b[36m", "\x1b[35m", "\x1b[39m")

    def tt(step: int, msg: str, level: str = "INFO") -> str:
        return f"[rank0]:[titan] {_asctime(step)} - root - {level} - {msg}"

    yield [tt(0, "Starting job: Llama 3 8B training"),
           tt(0, "Building 1-D device mesh with ['dp_shard'], [16]"),
           tt(0, "[GC] Initial GC collection. 0.00 seconds."),
           tt(0, "Loading tokenizer from tokenizer.json"),
           tt(0, "Preparing c4 dataset from allenai/c4"),
           tt(0, "Building llama3 8B with TransformerModelArgs(_enforced='This field is used to "
                 "enforce all fields have defaults.', dim=4096, n_layers=32, n_heads=32)"),
           tt(0, f"{blue}Model llama3 8B {red}size: 8,030,261,248 total parameters{reset}"),
           tt(0, "Applied selective activation checkpointing to the model"),
           tt(0, "Applied FSDP to the model"),
           tt(0, "Peak FLOPS used for computing MFU: 9.890e+14"),
           tt(0, "CUDA memory usage for model: 3.77GiB(3.97%)"),
           tt(0, "Training starts at step 1.")]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines.append(tt(s, f"{red}step: {s:2}  {green}loss: {losses[s % 997]}  "
                               f"{orange}grad_norm: {norms[s % 101]}  {turq}memory: "
                               f"63.{s % 89:02d}GiB(66.{s % 83:02d}%)  {blue}tps: {tps[s % 89]}  "
                               f"{cyan}tflops: 376.{s % 97:02d}  {magenta}mfu: 38.{s % 91:02d}%"
                               f"{reset}"))
            if s % 1000 == 0:
                lines += [tt(s, "[GC] Peforming periodical GC collection 0.05 seconds"),
                          tt(s, "Saving the checkpoint (or staging if async is enabled)."),
                          tt(s, "[GC] GC collection invoked by checkpointer. 0.04 seconds"),
                          tt(s, "Finished saving the checkpoint (or staging if async is enabled)"
                                "in 14.21 seconds.")]
        step += BATCH
        yield lines


# --- mmengine (MMDetection, MMPretrain ...) -------------------------------------------------------
# open-mmlab/mmengine mmengine/runner/log_processor.py LogProcessor.get_log_after_iter
# (`Epoch(train)  [3][ 50/500]  base_lr: ... lr: ...  eta: ...  time: ...  data_time: ...
# memory: ...  grad_norm: ...  loss: ...`, the epoch right-aligned to max_epochs' width, the
# iteration to the dataloader's) and get_log_after_epoch (`Epoch(val) [3][100/100]    coco/...`),
# mmengine/logging/logger.py MMFormatter ("%(asctime)s - %(name)s - %(levelname)s - %(message)s",
# datefmt "%Y/%m/%d %H:%M:%S"), mmengine/hooks/checkpoint_hook.py ("Saving checkpoint at ...").

def mmengine(rng: random.Random, node_rank: int):
    losses = [rng.gauss(1.1, 0.05) for _ in range(997)]
    per_epoch, max_epochs, interval = 7330, 100, 10

    def mm(step: int, msg: str, level: str = "INFO") -> str:
        h, m, s, _ = _clock(step)
        return f"2026/11/29 {h:02d}:{m:02d}:{s:02d} - mmengine - {level} - {msg}"

    yield [mm(0, "Distributed training is enabled."),
           mm(0, "Config:\nmodel = dict(type='RTMDet', data_preprocessor=dict(type="
                 "'DetDataPreprocessor', mean=[103.53, 116.28, 123.675], std=[57.375, 57.12, "
                 "58.395], bgr_to_rgb=False))"),
           mm(0, "Checkpoints will be saved to /work_dirs/rtmdet_l_8xb32-300e_coco."),
           mm(0, "Hooks will be executed in the following order:"),
           "before_run:",
           "(VERY_HIGH   ) RuntimeInfoHook                    ",
           "(BELOW_NORMAL) LoggerHook                         "]
    step = 0
    while True:
        lines = []
        for s in range(step + interval, step + BATCH + 1, interval):
            epoch, it = s // per_epoch + 1, s % per_epoch or per_epoch
            loss = losses[s % 997]
            lines.append(mm(s, f"Epoch(train){f'[{epoch}]'.rjust(len(str(max_epochs)) + 3)}"
                               f"[{it:>4d}/{per_epoch}]  base_lr: 4.0000e-03 lr: "
                               f"{4.0 - s * 1e-6:.4f}e-03  eta: {_eta((per_epoch * max_epochs - s) * 4 // 10)}"
                               f"  time: 0.4{s % 97:03d}  data_time: 0.0{s % 89:03d}  memory: "
                               f"{21000 + s % 997}  grad_norm: {1 + loss:.4f}  loss: {loss:.4f}  "
                               f"loss_cls: {loss * 0.4:.4f}  loss_bbox: {loss * 0.6:.4f}"))
            if s % 1000 == 0:
                lines.append(mm(s, "Exp name: rtmdet_l_8xb32-300e_coco_20261129_175801"))
            if it == per_epoch:
                lines += [mm(s, f"Saving checkpoint at {epoch} epochs"),
                          mm(s, f"Epoch(val) [{epoch}][625/625]    coco/bbox_mAP: 0.4810  "
                                f"coco/bbox_mAP_50: 0.6570  coco/bbox_mAP_75: 0.5230  "
                                f"data_time: 0.0031  time: 0.1121")]
        step += BATCH
        yield lines


# --- NVIDIA NeMo 2 ------------------------------------------------------------------------------
# NVIDIA/NeMo nemo/utils/formatters/base.py BaseNeMoFormatter ("[NeMo %(levelname)1.1s
# %(asctime)s %(module)s:%(lineno)d] %(message)s", datefmt "%Y-%m-%d %H:%M:%S"; colours only on a
# terminal), nemo/lightning/pytorch/callbacks/progress_printer.py ProgressPrinter.on_train_batch_end
# (`Training epoch 0, iteration 12/99999 | lr: ... | global_batch_size: ... | global_step: ... |
# reduced_train_loss: ... | train_step_timing in s: ... | consumed_samples: ...`).

def nemo(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.4, 0.1):.4g}" for _ in range(997)]
    timing = [f"{rng.gauss(1.23, 0.02):.4g}" for _ in range(89)]
    total = 500_000

    def nl(step: int, module: str, msg: str, level: str = "I") -> str:
        h, m, s, _ = _clock(step)
        return f"[NeMo {level} 2026-11-29 {h:02d}:{m:02d}:{s:02d} {module}] {msg}"

    yield [nl(0, "nemo_logging:393", "Experiments will be logged at /results/llama3_8b/2026-11-29_17-58-01"),
           nl(0, "megatron_strategy:332", "Fixing mis-match between ddp-config & mcore-optimizer "
                                          "config", "W"),
           nl(0, "megatron_init:396", "Rank 0 has data parallel group : [0, 8]"),
           nl(0, "megatron_init:402", "All data parallel group ranks with context parallel "
                                      "combined: [[0, 8], [1, 9], [2, 10], [3, 11]]"),
           nl(0, "megatron_parallel:550", "  > number of parameters on (tensor, pipeline) model "
                                          "parallel rank (0 ,0): 1003782656"),
           "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]",
           nl(0, "utils:302", "Setting up optimizer with config OptimizerConfig(optimizer='adam', "
                              "lr=0.0003, min_lr=None, weight_decay=0.1, fp16=False, bf16=True)")]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines.append(f"Training epoch 0, iteration {s}/{total - 1} | lr: {2.999 - s * 1e-6:.4g}e-04 "
                         f"| global_batch_size: 512 | global_step: {s} | reduced_train_loss: "
                         f"{losses[s % 997]} | train_step_timing in s: {timing[s % 89]} | "
                         f"consumed_samples: {512 * (s + 1)}")
            if s % 1000 == 0:
                lines += [nl(s, "nemo_model_checkpoint:522", f"Scheduled async checkpoint save for "
                                                             f"/results/llama3_8b/checkpoints/model--"
                                                             f"reduced_train_loss={losses[s % 997]}-"
                                                             f"epoch=0-consumed_samples={512 * s}.0-last.ckpt"),
                          nl(s, "nemo_model_checkpoint:497", "Async checkpoint save for step "
                                                             f"{s} finalized successfully.")]
        step += BATCH
        yield lines


# --- fairseq ------------------------------------------------------------------------------------
# facebookresearch/fairseq fairseq/logging/progress_bar.py SimpleProgressBar.log (`epoch 001:
# 100 / 1563 loss=..., ...`, the stats joined by _str_commas), fairseq_cli/train.py's logging
# format "%(asctime)s | %(levelname)s | %(name)s | %(message)s" with the logger renamed
# train_inner (progress_bar.rename_logger), and its end-of-epoch `valid` and checkpoint lines
# (fairseq/checkpoint_utils.py save_checkpoint).

def fairseq(rng: random.Random, node_rank: int):
    losses = [rng.gauss(5.2, 0.1) for _ in range(997)]
    per_epoch, interval = 15630, 10

    def fs(step: int, name: str, msg: str) -> str:
        h, m, s, _ = _clock(step)
        return f"2026-11-29 {h:02d}:{m:02d}:{s:02d} | INFO | {name} | {msg}"

    yield [fs(0, "fairseq.distributed.utils", "distributed init (rank 0): env://"),
           fs(0, "fairseq_cli.train", "TransformerLanguageModel(\n  (decoder): TransformerDecoder("
                                      "\n    (dropout_module): FairseqDropout()\n  )\n)"),
           fs(0, "fairseq_cli.train", "task: LanguageModelingTask"),
           fs(0, "fairseq_cli.train", "model: TransformerLanguageModel"),
           fs(0, "fairseq_cli.train", "num. shared model params: 354,836,480 (num. trained: "
                                      "354,836,480)"),
           fs(0, "fairseq.trainer", "begin training epoch 1"),
           fs(0, "fairseq_cli.train", "Start iterating over samples")]
    step = 0
    while True:
        lines = []
        for s in range(step + interval, step + BATCH + 1, interval):
            epoch, it = s // per_epoch + 1, s % per_epoch
            loss = losses[s % 997]
            lines.append(fs(s, "train_inner", f"epoch {epoch:03d}:  {it:5d} / {per_epoch} "
                                              f"loss={loss:.3f}, ppl={2 ** loss:.2f}, wps=12{s % 997:03d}.4, "
                                              f"ups=2.{s % 89:02d}, wpb=65536, bsz=64, num_updates={s}, "
                                              f"lr=0.000{s % 997:03d}, gnorm=0.{s % 991:03d}, "
                                              f"loss_scale=4, train_wall={4 + s % 7}, gb_free=20.1, "
                                              f"wall={s * 412 // 1000}"))
            if it == 0:
                lines += [fs(s, "fairseq_cli.train", f"begin validation on \"valid\" subset"),
                          fs(s, "valid", f"epoch {epoch - 1:03d} | valid on 'valid' subset | loss "
                                         f"{loss:.3f} | ppl {2 ** loss:.2f} | wps 61234.5 | wpb "
                                         f"65536 | bsz 64 | num_updates {s}"),
                          fs(s, "fairseq.checkpoint_utils", f"Saved checkpoint checkpoints/"
                                                            f"checkpoint{epoch - 1}.pt (epoch "
                                                            f"{epoch - 1} @ {s} updates, score "
                                                            f"{loss:.3f}) (writing took 12.3 seconds)")]
        step += BATCH
        yield lines


# --- detectron2 ---------------------------------------------------------------------------------
# facebookresearch/detectron2 detectron2/utils/events.py CommonMetricPrinter.write (` eta: ...
# iter: ...  total_loss: ...  loss_cls: ...  time: ...  last_time: ...  data_time: ...
# last_data_time: ...  lr: ...  max_mem: ...M`, every 20 iterations), detectron2/utils/logger.py
# setup_logger's "[%(asctime)s %(name)s]: " with datefmt "%m/%d %H:%M:%S" and "detectron2" shown
# as "d2".

def detectron2(rng: random.Random, node_rank: int):
    losses = [rng.gauss(0.9, 0.05) for _ in range(997)]
    total, period = 270_000, 20

    def d2(step: int, name: str, msg: str) -> str:
        h, m, s, _ = _clock(step)
        return f"[11/29 {h:02d}:{m:02d}:{s:02d} {name}]: {msg}"

    yield [d2(0, "d2.engine.defaults", "Model:\nGeneralizedRCNN(\n  (backbone): FPN(\n  )\n)"),
           d2(0, "d2.data.build", "Removed 1021 images with no usable annotations. 117266 images "
                                  "left."),
           d2(0, "d2.data.common", "Serializing 117266 elements to byte tensors and concatenating "
                                   "them all ..."),
           d2(0, "d2.engine.train_loop", "Starting training from iteration 0")]
    step = 0
    while True:
        lines = []
        for s in range(step + period, step + BATCH + 1, period):
            loss = losses[s % 997]
            lines.append(d2(s, "d2.utils.events", f" eta: {_eta((total - s) * 41 // 100)}  iter: "
                                                  f"{s - 1}  total_loss: {loss:.4g}  loss_cls: "
                                                  f"{loss * 0.3:.4g}  loss_box_reg: {loss * 0.35:.4g}"
                                                  f"  loss_mask: {loss * 0.25:.4g}  loss_rpn_cls: "
                                                  f"{loss * 0.04:.4g}  loss_rpn_loc: {loss * 0.06:.4g}"
                                                  f"    time: 0.4{s % 97:03d}  last_time: 0.4{s % 89:03d}"
                                                  f"  data_time: 0.0{s % 83:03d}  last_data_time: "
                                                  f"0.0{s % 79:03d}   lr: 0.02  max_mem: "
                                                  f"{10200 + s % 97}M"))
            if s % 5000 == 0:
                lines.append(d2(s, "fvcore.common.checkpoint", f"Saving checkpoint to "
                                                               f"./output/model_{s - 1:07d}.pth"))
        step += BATCH
        yield lines


# --- python logging with a JSON formatter ---------------------------------------------------------
# madzak/python-json-logger src/pythonjsonlogger/jsonlogger.py JsonFormatter (the format's
# fields, then the record's `extra`, json.dumps'd one record a line), with
# fmt "%(asctime)s %(levelname)s %(name)s %(message)s" as its README shows.

def json_logging(rng: random.Random, node_rank: int):
    losses = [round(rng.gauss(2.1, 0.1), 4) for _ in range(997)]
    tps = [rng.randint(175_000, 190_000) for _ in range(89)]
    total = 500_000
    step = 0
    yield [json.dumps({"asctime": _asctime(0), "levelname": "INFO", "name": "train",
                       "message": "model has 1.3B parameters", "params": 1311263744,
                       "layers": 24})]
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines.append(json.dumps({
                "asctime": _asctime(s), "levelname": "INFO", "name": "train", "message": "step",
                "step": s, "total_steps": total, "loss": losses[s % 997],
                "grad_norm": round(0.4 + (s % 101) / 100, 4), "lr": 2.9e-4,
                "tokens_per_s": tps[s % 89], "mem_gib": 41.2, "rank": 0}))
            if s % 1000 == 0:
                lines.append(json.dumps({
                    "asctime": _asctime(s), "levelname": "INFO", "name": "checkpoint",
                    "message": "saved checkpoint", "path": f"/ckpt/run-17/step-{s}",
                    "seconds": 41.7}))
        step += BATCH
        yield lines


# --- python warnings behind torchrun's [rankN]: prefix, three every step --------------------------
# python/cpython Lib/warnings.py _formatwarnmsg_impl (`{file}:{line}: {category}: {message}` then
# the source line, indented two spaces); the messages of pytorch/pytorch
# torch/optim/lr_scheduler.py LRScheduler.step (it quotes `optimizer.step()`),
# torch/csrc/distributed/c10d/reducer.cpp (grad strides, raised from the backward call in
# torch/autograd/graph.py) and torch/nn/modules/module.py _maybe_warn_non_full_backward_hook;
# torchrun's `[rank3]:` on every line a process writes (torch/distributed/elastic/multiprocessing,
# log_line_prefix_template / --tee), eight local ranks sharing one stream.

def rank_warnings(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(1.4, 0.08):.4f}" for _ in range(997)]
    total = 1_000_000
    site = "/opt/conda/lib/python3.11/site-packages/torch"

    def three(r: int) -> list[str]:
        p = f"[rank{r}]:"
        return [
            f"{p}{site}/optim/lr_scheduler.py:227: UserWarning: Detected call of "
            "`lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you "
            "should call them in the opposite order: `optimizer.step()` before "
            "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
            "value of the learning rate schedule. See more details at "
            "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
            f"{p}  warnings.warn(",
            f"{p}{site}/autograd/graph.py:825: UserWarning: Grad strides do not match bucket view "
            "strides. This may indicate grad was not created according to the gradient layout "
            "contract, or that the param's strides changed since DDP was constructed.  This is not "
            "an error, but may impair performance.",
            f"{p}grad.sizes() = [4096, 1024], strides() = [1, 4096]",
            f"{p}bucket_view.sizes() = [4096, 1024], strides() = [1024, 1] (Triggered internally "
            "at ../torch/csrc/distributed/c10d/reducer.cpp:327.)",
            f"{p}  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to "
            "run the backward pass",
            f"{p}{site}/nn/modules/module.py:1830: FutureWarning: Using a non-full backward hook "
            "when the forward contains multiple autograd Nodes is deprecated and will be removed in "
            "future versions. This hook will be missing some grad_input. Please use "
            "register_full_backward_hook to get the documented behavior.",
            f"{p}  self._maybe_warn_non_full_backward_hook(args, result, grad_fn)",
        ]

    by_rank = [three(r + 8 * node_rank) for r in range(8)]
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            lines += by_rank[s % 8]
            lines.append(f"[rank{8 * node_rank}]:step {s}/{total} loss {losses[s % 997]}")
        step += BATCH
        yield lines


# --- python logging with a handled, logged traceback every 200 steps -----------------------------
# python/cpython Lib/logging/__init__.py Logger.exception / Formatter.formatException (the
# traceback after the message, unprefixed, chained with "During handling of the above exception,
# another exception occurred:"); the frames are those of a botocore read that timed out
# (boto/botocore botocore/response.py StreamingBody.read, urllib3/urllib3
# src/urllib3/response.py HTTPResponse._error_catcher) that the data loader retries.

_HANDLED = [
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.11/site-packages/urllib3/response.py", line 748, in _error_catcher',
    "    yield",
    '  File "/opt/conda/lib/python3.11/site-packages/urllib3/response.py", line 894, in _raw_read',
    "    data = self._fp_read(amt, read1=read1) if not fp_closed else b\"\"",
    '  File "/opt/conda/lib/python3.11/ssl.py", line 1314, in recv_into',
    "    return self.read(nbytes, buffer)",
    "TimeoutError: The read operation timed out",
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",
    '  File "/workspace/data/shards.py", line 88, in _fetch',
    '    return self._client.get_object(Bucket=self.bucket, Key=key)["Body"].read()',
    '  File "/opt/conda/lib/python3.11/site-packages/botocore/response.py", line 99, in read',
    "    chunk = self._raw_stream.read(amt)",
    "urllib3.exceptions.ReadTimeoutError: AWSHTTPSConnectionPool(host='s3.us-east-1.amazonaws.com', "
    "port=443): Read timed out.",
]


def handled_tracebacks(rng: random.Random, node_rank: int):
    losses = [f"{rng.gauss(2.1, 0.1):.4f}" for _ in range(997)]
    total = 500_000
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            t = _asctime(s)
            lines.append(f"{t} INFO train: step {s}/{total} loss={losses[s % 997]} "
                         f"lr=2.9e-04 tokens/s=18{s % 997:04d}")
            if s % 200 == 0:
                lines.append(f"{t} ERROR data.shards: failed to read s3://corpus/shard-{s % 8191:05d}"
                             f".tar, retrying (attempt 1 of 5)")
                lines += _HANDLED
                lines.append(f"{t} INFO data.shards: s3://corpus/shard-{s % 8191:05d}.tar read on "
                             f"attempt 2")
        step += BATCH
        yield lines


# --- wrappers: what a collector writes around each line -----------------------------------------

def crlf(lines: list[str], state: dict) -> str:
    """Every line ended by CRLF, as a log written on Windows or through a pty in raw mode."""
    return "\r\n".join(lines) + "\r\n"


# containerd/containerd internal/cri/io/logger.go redirectLogs: `<RFC3339Nano time> <stream> <tag>
# <content>`, tag F for a full line and P for a partial one, a line longer than the CRI
# maximum (max_container_log_line_size, 16 KiB) cut into P records and its last part F;
# kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go parseCRILog reads them back.
# Go's RFC3339Nano drops trailing zeros of the fraction.
CRI_MAX = 16 * 1024


def _rfc3339nano(ns: int) -> str:
    sec, frac = divmod(ns, 1_000_000_000)
    h, m, s = (18 + sec // 3600) % 24, sec // 60 % 60, sec % 60
    fraction = f"{frac:09d}".rstrip("0")
    return f"2026-11-29T{h:02d}:{m:02d}:{s:02d}{'.' + fraction if fraction else ''}Z"


def cri(lines: list[str], state: dict) -> str:
    ns = state.setdefault("ns", 0)
    out = []
    for line in lines:
        ns += 4_117_913
        stamp = _rfc3339nano(ns)
        data = line.encode("utf-8")
        while len(data) > CRI_MAX:
            cut = CRI_MAX
            while cut > 0 and (data[cut] & 0xC0) == 0x80:  # keep the text valid UTF-8 here
                cut -= 1
            out.append(f"{stamp} stderr P {data[:cut].decode('utf-8')}")
            data = data[cut:]
        out.append(f"{stamp} stderr F {data.decode('utf-8')}")
    state["ns"] = ns
    return "\n".join(out) + "\n"


# moby/moby daemon/logger/jsonfilelog/jsonlog/jsonlogbytes.go JSONLogs.MarshalJSONBuf
# (`{"log":"...","stream":"stderr","time":"..."}`, `<`, `>` and `&` escaped as \u003c ...),
# daemon/logger/copier.go (a message is at most 16 KiB; a longer line is cut into partial
# messages, whose "log" does not end in \n).
DOCKER_MAX = 16 * 1024


def docker_json(lines: list[str], state: dict) -> str:
    ns = state.setdefault("ns", 0)
    out = []
    for line in lines:
        ns += 4_117_913
        stamp = _rfc3339nano(ns)
        data = line + "\n"
        pieces = [data]
        if len(data) > DOCKER_MAX:
            pieces = [data[i:i + DOCKER_MAX] for i in range(0, len(data), DOCKER_MAX)]
        for piece in pieces:
            text = json.dumps(piece, ensure_ascii=False)
            text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            out.append(f'{{"log":{text},"stream":"stderr","time":"{stamp}"}}')
    state["ns"] = ns
    return "\n".join(out) + "\n"


def hf_tqdm_mixed(rng: random.Random, node_rank: int):
    """What the container styles wrap: a Lightning tqdm epoch (long `\\r` lines, cut into
    partial records) between python logging lines."""
    bars = lightning_tqdm(rng, node_rank)
    logs = handled_tracebacks(rng, node_rank)
    yield next(bars)
    while True:
        epoch = next(bars)
        lines = next(logs)
        yield lines[:len(lines) // 2] + epoch[:2] + lines[len(lines) // 2:] + epoch[2:]


# style name → (training output, wrapper or None)
FRAMEWORK_STYLES = {
    "deepspeed": (deepspeed, None),
    "lightning-tqdm": (lightning_tqdm, None),
    "lightning-rich": (lightning_rich, None),
    "hf-trainer": (hf_trainer, None),
    "accelerate": (accelerate, None),
    "torchtitan": (torchtitan, None),
    "mmengine": (mmengine, None),
    "nemo": (nemo, None),
    "fairseq": (fairseq, None),
    "detectron2": (detectron2, None),
    "json-logging": (json_logging, None),
    "rank-warnings": (rank_warnings, None),
    "handled-tracebacks": (handled_tracebacks, None),
    # crlf (the pylogging style with CRLF line ends) is registered in styles.py
    "cri": (hf_tqdm_mixed, cri),
    "docker-json": (hf_tqdm_mixed, docker_json),
}
