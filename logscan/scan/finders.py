"""Finding lines, not interpreting them: the literal pre-filter and progress detection.

make_line_finder gives the candidate-line finder: Hyperscan fed the exact candidate patterns
(logscan.scan.hyperscan_matcher), or where that cannot be used the pure-Python LineFinder, which
finds the lines holding any of the patterns' literals in about one pass. ProgressFinder finds
the first and the last progress line of a block without matching lines one by one. Progress
lines are the bulk of a training log and most other lines match no candidate pattern: with
Hyperscan, neither costs Python work per line. What the lines found mean
is logscan.scan.interpret's job; which literals are looked for, logscan.scan.lineparse's and the
catalogue's (see logscan.scan.scanner).
"""

from __future__ import annotations

import os
import re
import sys

from logscan.catalogue import too_costly
from logscan.errors import ConfigError
from logscan.limits import MAX_RULE_TIMEOUTS, PATTERN_TIMEOUT

# --- the literal pre-filter -------------------------------------------------------------------

# Bytes from the most to the least common in logs: the first guess of which byte of a literal is
# rare, until the log itself has been sampled.
_COMMON_BYTES = (b" etaoinsrlcdhupmfg0123456789.:/-_=,[]()bywvk'\"ETAOINSRLCDHUPMFGxBYWVKjqz"
                 b"JQXZ|%<>#@!*&^~`{};?+$\\\t")
_STATIC_RANK = {b: i for i, b in enumerate(_COMMON_BYTES)}


def essential_literals(literals) -> tuple[bytes, ...]:
    """The literals worth looking for: a line holding one that contains a shorter one holds the
    shorter one too, and a literal with a newline is never inside a line."""
    kept: list[bytes] = []
    for lit in sorted({lit for lit in literals if lit and b"\n" not in lit}, key=len):
        if not any(short in lit for short in kept):
            kept.append(lit)
    return tuple(kept)


class LineFinder:
    """Finds the lines of a block that hold any of a set of literals, in about one pass.

    Each literal has a key byte: of its bytes, the one rarest in the log. One `bytes.translate`
    reduces a block to its key bytes and newlines, which also counts its lines. A literal is then
    looked for only when its key byte is in the block: at each place the key byte is when those
    are few, by searching the block for the literal when they are many (a "dense" literal, made
    only of bytes common in this stretch of log: the costly case). When key bytes turn common
    (the log changed style), keys are chosen again from a sample of the block.
    """

    exact = False      # lines that hold a literal: the scanner's confirm pattern decides
    marks_native = False  # scan() does not say which lines a native pattern matched
    FEW = 256          # key byte places checked one by one; above this, bytes.find
    SAMPLE = 1 << 14   # bytes sampled from a block to choose keys

    def __init__(self, literals):
        self.literals = essential_literals(literals)
        # re's literal-prefix search beats bytes.find on text full of the literal's bytes.
        self._search = {lit: re.compile(re.escape(lit)).search for lit in self.literals}
        self._alphabet = sorted({b for lit in self.literals for b in lit})
        self._distinct = [(lit, tuple(set(lit))) for lit in self.literals]
        self._choose_keys({}, 1)

    def _choose_keys(self, counts: dict[int, int], scale: float) -> None:
        rank = _STATIC_RANK
        score = {b: (counts.get(b, 0), -rank.get(b, len(rank)), b) for b in self._alphabet}
        by_key: dict[int, list[tuple[bytes, int]]] = {}
        for lit, distinct in self._distinct:
            key = min(distinct, key=score.__getitem__)
            by_key.setdefault(key, []).append((lit, lit.index(key)))
        # A key byte found far more often than its sample promised means the log changed.
        self._by_key = {k: (bytes((k,)), tuple(v), max(self.FEW, int(2 * scale * counts.get(k, 0))))
                        for k, v in sorted(by_key.items())}
        keep = set(by_key) | {ord("\n")}
        self._delete = bytes(b for b in range(256) if b not in keep)

    def _rekey(self, block: bytes) -> None:
        # The block's last quarter is the text that the next block most resembles.
        tail = len(block) * 3 // 4
        step = max(1, (len(block) - tail) // self.SAMPLE)
        sample = block[tail::step]
        scale = step * len(block) / max(1, len(block) - tail)
        self._choose_keys({b: sample.count(bytes((b,))) for b in self._alphabet}, scale)

    def scan(self, block: bytes) -> tuple[list[int], int]:
        """(sorted offsets of the lines that hold a literal, number of newlines in the block)"""
        kept = block.translate(None, self._delete)
        newlines = kept.count(b"\n")
        starts: set[int] = set()
        find, rfind, startswith = block.find, block.rfind, block.startswith
        stale = False
        if len(kept) <= 256:  # a small block: look only at the key bytes it holds
            keyed = [self._by_key[k] for k in set(kept) if k in self._by_key]
        else:
            keyed = [k for k in self._by_key.values() if k[0] in kept]
        for key, literals, limit in keyed:
            places = kept.count(key)
            stale = stale or places > limit
            if places <= self.FEW:
                pos = find(key)
                while pos >= 0:
                    for lit, at in literals:
                        if pos >= at and startswith(lit, pos - at):
                            starts.add(rfind(b"\n", 0, pos - at) + 1)
                    pos = find(key, pos + 1)
            else:
                for lit, _ in literals:
                    search = self._search[lit]
                    found = search(block)
                    while found is not None:
                        pos = found.start()
                        starts.add(rfind(b"\n", 0, pos) + 1)
                        end = find(b"\n", pos + len(lit))
                        if end < 0:
                            break
                        found = search(block, end + 1)
        if stale:
            self._rekey(block)  # for the next block: this one is done
        return sorted(starts) if len(starts) > 1 else list(starts), newlines


MATCHERS = ("python", "hyperscan")
SLOW_PATH_NOTICE = ("logscan: the hyperscan package is not usable here; scanning with the "
                    "pure-Python matcher, the slow path (same results)")
_noticed = False


def make_line_finder(wanted, matcher: str | None = None, rules=()):
    """The candidate-line finder for `wanted` (the native parsers' lineparse.Candidates) and
    `rules` ((patterns, keyword literals) of each catalogue rule): Hyperscan compiled with
    the exact native patterns and the rules' raw covers (logscan.scan.hyperscan_matcher) if
    asked for or, by default, if it can be used; else the pure-Python LineFinder of all their
    literals, a tested fallback that finds the same confirmed lines and more (the scanner drops
    those no pattern matches), slower, and says so once on stderr. LOGSCAN_MATCHER=python|hyperscan
    chooses when `matcher` is None. A matcher that is unknown, or asked for and unusable, is a
    ConfigError (one line)."""
    global _noticed
    matcher = matcher or os.environ.get("LOGSCAN_MATCHER") or "auto"
    if matcher not in (*MATCHERS, "auto"):
        raise ConfigError(f"unknown matcher {matcher!r}: use one of {', '.join(MATCHERS)}")
    if matcher != "python":
        try:
            from logscan.scan.hyperscan_matcher import HyperscanLineFinder

            return HyperscanLineFinder(wanted, rules)
        except ImportError:
            if matcher == "hyperscan":
                raise ConfigError("matcher 'hyperscan' needs the hyperscan package: "
                                  "pip install hyperscan, or use the python matcher") from None
        except Exception as exc:  # a build that cannot compile: the fallback still works
            if matcher == "hyperscan":
                raise ConfigError(f"matcher 'hyperscan' cannot be used: "
                                  f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                                  ) from None
        if not _noticed:
            _noticed = True
            print(SLOW_PATH_NOTICE, file=sys.stderr)
    return LineFinder([lit for c in wanted for lit in c.literals]
                      + [lit for _, keywords in rules for lit in keywords])


# --- progress lines --------------------------------------------------------------------------

# A checkpoint's file name holds the step and metrics it was saved at (Lightning's ModelCheckpoint:
# `epoch=5119-step=2700280.ckpt`, `epoch=3-step=1000-val_loss=0.50.ckpt`): read back when a run
# resumes, they are no step taken by this one.
_NOT_A_FILE_NAME = r"(?![\w.=+-]{0,200}\.(?:ckpt|pth?|safetensors|bin)\b)"

DEFAULT_PROGRESS = (
    # A word starts after a non-word character or a colour code (`\x1b[31mstep: 10`: torchtitan
    # colours every field of its metrics line).
    # A step counter: `step 12`, `step: 12/100`, `global_step=12`, `steps 12`; never a config
    # print (`steps=30`, `max_steps: 1000`, `Total optimization steps = 30`, `eval_steps 500`),
    # nor a Slurm job step's id (`*** STEP 12345.0 ON node-1 CANCELLED AT ...`).
    # Nor a field of a checkpoint's file name (_NOT_A_FILE_NAME).
    # Nor Google Cloud Build's tag of its build steps' output (`Step #4: `, `Step #0 - "train": `).
    r"(?i:(?:\x1b\[[0-9;]*m|\b)(?:global[_ ])?step\b[ \t]*(?:[:=]|#(?!\d+(?::| - \")))?[ \t]*\[?\d+"
    r"(?!\d|\.(?:\d|batch\b|extern\b))" + _NOT_A_FILE_NAME + ")",
    r"(?i:(?:\x1b\[[0-9;]*m|\b)steps[ \t]+\d+)",
    r"(?i:(?:\x1b\[[0-9;]*m|\b)iter(?:ation)?\b[ \t]*[:=#]?[ \t]*\[?\d+)",
    # a bar past 0%, or at 0% with its first steps counted (`0%|   | 5/13945 [05:55<253:35:40, 65.49s/it]`)
    r"(?<!\d)(?:[1-9]\d?|100)%\||(?<!\d)0%\|[^|\n]{0,200}\|[ \t]*[1-9]\d*/\d",
    # (a loss of nan or inf is a step taken too: a diverged run still trains, see training-diverged)
    r"""['"](?:loss|train_loss)['"][ \t]*:[ \t]*['"]?(?:[-+]?[\d.]|(?i:nan|inf)\b)""",
    # `loss=0.5`, `loss: 0.5`, and a named one: `train_loss: 0.512` (Lightning's rich bar)
    r"(?i:(?:\x1b\[[0-9;]*m|\b|_)loss[ \t]*[:=][ \t]*(?:[-+]?\d|nan\b|inf\b)" + _NOT_A_FILE_NAME + ")",
    # a loss as a field `loss 4.577` (WeNet's `TRAIN Batch {}/{} loss {:.6f} ...`, nanoGPT's and lit-gpt's
    # `iter {}: loss {:.4f}`): a decimal, or nan or inf. In lower case only: the meters of evaluation
    # loops print `Loss 0.9534 (0.9534)` (pytorch/examples' ImageNet `Test: [ 0/49]`, Swin's `Test: [0/112]`)
    r"\bloss[ \t]+(?:[-+]?\d+\.\d|nan\b|inf\b)",
    # Swin Transformer's save of an epoch's checkpoint (utils.py, save_checkpoint: `{save_path} saved !!!`,
    # the path `ckpt_epoch_{epoch}.pth`), as the repositories built on it (VMamba) keep it
    r"ckpt_epoch_\d+\.pth saved\b",
    # a loss among fields a pipe parts, `key value`: fairseq's simple log format (progress_bar.py,
    # _str_pipes: `' | '.join(key + ' ' + value)` after `epoch 001`), pytorch/examples' language
    # model (`| epoch   1 |   200/ 2983 batches | lr 5.00 | ms/batch 45.06 | loss  5.45 | ppl ...`)
    r"(?i:\|[ \t]*(?:\w+_)?loss[ \t]+(?:[-+]?\d|nan\b|inf\b))",
    # DeepSpeed's wall_clock_breakdown, logged after each optimizer step: `rank=0 time (ms) |
    # forward_microstep: 1330.05 | ...` (`fwd_microstep` from 0.9)
    r"time \(ms\) \| (?:forward|fwd)_microstep: \d",
    # A checkpoint saved after training steps, told with their count: mmengine's CheckpointHook
    # (`Saving checkpoint at {epoch + 1} epochs`, `... at {iter + 1} iterations`), the Hugging Face
    # Trainer's save into `checkpoint-{global_step}`, fairseq's `saved checkpoint {path} (epoch
    # {epoch} @ {updates} updates, ...` (capitalised from 0.10).
    r"Saving checkpoint at [1-9]\d* (?:epochs|iterations)\b",
    r"Saving model checkpoint to \S*checkpoint-[1-9]\d*",
    # DeepSpeed's engine saving under the Trainer's tag (`global_step{N}`): `[Rank 0] Saving model
    # checkpoint: {dir}/checkpoint-5000/global_step5000/...` (runtime/engine.py, _save_checkpoint)
    r"Saving model checkpoint: \S*global_step[1-9]\d*",
    r"[Ss]aved checkpoint \S+ \(epoch \d+ @ [1-9]\d* updates",
    # torchtune's checkpointer, after an epoch's steps: `Model checkpoint of size {size} GiB saved to
    # {output_dir}/epoch_{epoch}/...` (`.../hf_model_{part}_{epoch}.pt`, `GB`, in earlier releases)
    r"Model checkpoint of size [\d.]+ \w+ saved to \S",
    # DDP's forward rebuilding its buckets (nn/parallel/distributed.py, 1.7 on, at INFO; mmcv's
    # MMDistributedDataParallel logs it too): once, at the second training iteration, in the order the
    # first backward made its gradients ready. That backward's all-reduce ran on every rank.
    r"Reducer buckets have been rebuilt in this iteration",
    # the MetricLogger of torchvision's reference scripts (references/*/utils.py, log_every) and of the
    # repositories built on it (DeiT, MAE, DINO, DETR): `Epoch: [{epoch}]  [{i}/{len}]  eta: ...`,
    # printed after batch i ran; the ProgressMeter of pytorch/examples' ImageNet script, after batch
    # i: `Epoch: [{epoch}][{i}/{len}]`; Swin Transformer's main.py: `Train: [{epoch}/{epochs}][{idx}/{steps}]`
    r"Epoch: \[\d+\]\s*\[\s*\d+/\d+\]",
    r"Train: \[\d+/\d+\]\[\s*\d+/\d+\]",
)
# Every match of a default progress pattern holds one of these, in some letter case.
PROGRESS_LITERALS = (b"step", b"iter", b"loss", b"%|", b"checkpoint", b"epoch: [", b"train: [", b"ckpt_epoch_")

# Words that make a line an error report or the scheduler's, whatever progress-like words it
# holds; and the bars of getting ready to train (loading a checkpoint, downloading, a datasets
# map or filter, tokenising, preparing a dataset, an inference engine capturing its CUDA graphs:
# vLLM's `Capturing CUDA graph shapes`, SGLang's `Capturing batches`), which run before the first
# batch whatever their percentage says.
# Each word of getting ready, as its pattern: where it is a word's start (_GETTING_READY: the literal
# bytes.find looks for, lowered, to try it only there).
# TRL's SFTTrainer names its dataset's maps (`Converting train dataset to ChatML`, `Adding EOS to train
# dataset`, `Truncating train dataset`, `Packing train dataset`), as the Hugging Face examples do
# (`Running tokenizer on dataset`, `Grouping texts in chunks of 1024`): a bar naming a dataset is its
# preparation.
_GETTING_READY_WORDS = (rb"load", rb"download", rb"fetch", rb"tokeni[sz]", rb"preprocess", rb"prepar", rb"extract",
                        rb"generat", rb"map\b", rb"filter\b", rb"resolv", rb"captur", rb"convert", rb"truncat",
                        rb"pack", rb"group", rb"dataset")
_GETTING_READY_ALTERNATIVES = rb"(?i:(?:" + b"|".join(_GETTING_READY_WORDS) + rb")[^|\r\n%]{0,80}?\d+%\|)"
NOT_PROGRESS = re.compile(
    rb'Error|Exception|Traceback|Warning|slurmstepd|srun:|\bFile "'
    rb'|\b' + _GETTING_READY_ALTERNATIVES)
# What NOT_PROGRESS's two halves need a line to hold: its error words, and (lowered) a word of
# getting ready and a bar's `%|`. `re` tries either half at every byte (2 ms on a 50 KB bar
# line); bytes.find looks for a literal at memchr's pace.
# Slurm's own lines (slurmstepd's `*** STEP 494583.0 ON node CANCELLED ...`, srun's reports) name
# job steps, never a training step.
_ERROR_WORDS = (b"Error", b"Exception", b"Traceback", b"Warning", b"slurmstepd", b"srun:")
_FILE_WORD = re.compile(rb'\bFile "')
_GETTING_READY = tuple(re.match(rb"[a-z]+", word)[0] for word in _GETTING_READY_WORDS)
# NOT_PROGRESS's second half without its leading \b, matched at a word's place (_getting_ready)
_GETTING_READY_BAR = re.compile(_GETTING_READY_ALTERNATIVES)
# A bar counting bytes is a transfer (a download, a checkpoint's shards), and one counting examples a
# dataset's map or filter (the datasets library's unit ` examples`, ` ba` for batches before 2.0), not
# training: tqdm's rate field after the elapsed and remaining time (std.py format_meter:
# `[{elapsed}<{remaining}, {rate_fmt}{postfix}]`), the bytes scaled (`256MB/s`, `1.04kB/s`), the rate
# not yet known (`?B/s`), or slower than one a second (`2.50s/ examples`).
_NOT_TRAINING_RATE = re.compile(rb"<[\d:?]{1,12}, *(?:(?:[\d.]{1,12} ?[kMGTPEZY]?|\?)(?:i?B| examples| ba)/s"
                                rb"|[\d.]{1,12}s/(?:i?B| examples| ba))[],]")
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_PLACES_TRIED = 256  # a line with more words of getting ready than this is searched whole


# detectron2's metrics line before any optimizer step (CommonMetricPrinter: `lr: N/A` until the LR
# scheduler hook records one, after the first step): its hooks write it once more when training raised
# at its first iteration (`iter: 0    lr: N/A  max_mem: 2371M`), which is no step taken.
_NO_STEP_YET = b"lr: N/A"


def tells_no_error(line: bytes) -> bool:
    """NOT_PROGRESS finds nothing in `line`, its bar counts no bytes or examples, and it is no
    metrics line of a loop that has not stepped yet; asked only when the literals they need are there."""
    if any(word in line for word in _ERROR_WORDS) or _NO_STEP_YET in line:
        return False
    if b'File "' in line and _FILE_WORD.search(line) is not None:
        return False
    if b"%|" not in line:
        return True
    if (b"B/s" in line or b" examples" in line or b" ba" in line) and _NOT_TRAINING_RATE.search(line) is not None:
        return False
    return not _getting_ready(line, line.lower())


def _getting_ready(line: bytes, lowered: bytes) -> bool:
    """NOT_PROGRESS's bar of getting ready is in `line`: tried only where one of its words
    starts, up to the first `%` after it (its `[^|\r\n%]` cannot pass one), so a 100 KB bar
    line costs the few places it names a data loader, not a search of every byte."""
    places = []
    for word in _GETTING_READY:
        at = lowered.find(word)
        while at >= 0:
            places.append(at)
            if len(places) > _PLACES_TRIED:
                return NOT_PROGRESS.search(line) is not None
            at = lowered.find(word, at + 1)
    for at in places:
        if at and line[at - 1] in _WORD_BYTES:
            continue  # no word boundary before it
        end = line.find(b"%", at)
        if end >= 0 and _GETTING_READY_BAR.match(line, at, end + 2) is not None:
            return True
    return False

# A user progress pattern that ran away is noted among the rule ids that did (Survey.rule_timeouts)
# by this flag and the pattern, which is how the user knows it.
USER_PROGRESS_FLAG = "--progress-pattern"

# Leading global flags, `(?i)`: the scanner puts a user's pattern inside a group, so they are made
# to scope that group.
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


def scope_global_flags(pattern: str) -> str:
    """`(?i)step` → `(?i:step)`: the same matches, as a part of a larger pattern."""
    flags, pos = "", 0
    while (found := _GLOBAL_FLAGS.match(pattern, pos)) is not None:
        flags, pos = flags + found[1], found.end()
    if not flags:
        return pattern
    # In verbose mode a trailing `# comment` would swallow the closing parenthesis.
    close = "\n)" if "x" in flags else ")"
    return f"(?{''.join(dict.fromkeys(flags))}:{pattern[pos:]}{close}"


def compile_progress() -> re.Pattern[bytes]:
    """The default progress patterns, as one. They are ours and cannot run away, so they run on
    `re` without a timeout; a user's run on the rule engine (compile_user_progress)."""
    return re.compile("|".join(f"(?:{p})" for p in DEFAULT_PROGRESS).encode())


def compile_user_progress(user_patterns: tuple[str, ...]) -> tuple:
    """A user's progress patterns, each compiled as the rule engine compiles a rule's pattern
    (the regex module, searched with limits.PATTERN_TIMEOUT per line): a pattern that runs
    away on a line costs that much and no more."""
    if not user_patterns:
        return ()  # the regex module is not imported for nothing (60 ms of a small scan)
    import regex

    compiled = []
    for pattern in user_patterns:
        if (why := too_costly(pattern)) is not None:
            raise ConfigError(f"progress pattern {pattern!r} has {why}: too costly to run")
        try:
            compiled.append(regex.compile(f"(?:{scope_global_flags(pattern)})".encode()))
        except (regex.error, ValueError, OverflowError, RecursionError, MemoryError) as exc:
            raise ConfigError(f"progress pattern {pattern!r} does not compile: {exc}") from None
    return tuple(compiled)


def _lines_forward(block: bytes, count: int):
    start, size = 0, len(block)
    for _ in range(count):
        if start >= size:
            return
        end = block.find(b"\n", start)
        end = size if end < 0 else end
        yield start, end
        start = end + 1


def _lines_backward(block: bytes, count: int):
    end = len(block) - 1 if block.endswith(b"\n") else len(block)
    for _ in range(count):
        if end < 0:
            return
        start = block.rfind(b"\n", 0, end) + 1
        yield start, end
        end = start - 1


def _literal_lines(lowered: bytes, forward: bool):
    """(start, end) of each line of a lowered block that holds a progress literal, in order
    (backward from the end when not `forward`); each literal's next place is found once and
    kept until passed, so a block costs a few passes whatever its lines."""
    size = len(lowered)
    if forward:
        places = {lit: lowered.find(lit) for lit in PROGRESS_LITERALS}
        while True:
            found = [pos for pos in places.values() if pos >= 0]
            if not found:
                return
            pos = min(found)
            start = lowered.rfind(b"\n", 0, pos) + 1
            end = lowered.find(b"\n", pos)
            end = size if end < 0 else end
            yield start, end
            for lit, at in places.items():
                if 0 <= at <= end:
                    places[lit] = lowered.find(lit, end + 1)
    else:
        places = {lit: lowered.rfind(lit) for lit in PROGRESS_LITERALS}
        while True:
            pos = max(places.values())
            if pos < 0:
                return
            start = lowered.rfind(b"\n", 0, pos) + 1
            end = lowered.find(b"\n", pos)
            end = size if end < 0 else end
            yield start, end
            for lit, at in places.items():
                if at >= start:
                    places[lit] = lowered.rfind(lit, 0, start) if start else -1


class ProgressFinder:
    """The first and the last progress line of a block, without matching lines one by one.

    In a training log the lines at either end of a block are usually progress lines, so those
    are tried first. Otherwise the default patterns are searched over the block and user
    patterns tried line by line. A progress line is a line in which
    some pattern matches. A user pattern that times out on MAX_RULE_TIMEOUTS lines is not tried
    again by this finder, as a rule is not (logscan.scan.interpret); each time out is noted in
    `timeouts` for the scanner to report.
    """

    LOOK = 8

    def __init__(self, user_patterns: tuple[str, ...] = ()):
        self.pattern = compile_progress()
        self.user = dict(zip(user_patterns, compile_user_progress(tuple(user_patterns))))
        self.timeouts: list[str] = []  # a user pattern, once per line it ran away on
        self._timed_out: dict[str, int] = {}

    def is_progress_line(self, line: bytes) -> bool:
        """Some pattern matches, on a `\r`-segment that does not tell of an error: an exception
        "... at step 12" is no progress, and a bar may share its line with the traceback after it."""
        return self._matches(line) and self._tells_no_error(line)

    def _tells_no_error(self, line: bytes) -> bool:
        if b"\r" not in line:
            return tells_no_error(line)
        # A bar redrawn an epoch long is one line of many segments: what was last on screen is
        # looked at first, so the cost is that of the segments after it, not of the whole line.
        return any(self._matches(segment) and tells_no_error(segment)
                   for segment in reversed(line.split(b"\r")))

    def _matches(self, line: bytes) -> bool:
        return self.pattern.search(line) is not None or self._user_matches(line)

    def _user_matches(self, line: bytes) -> bool:
        for text, pattern in self.user.items():
            if self._timed_out.get(text, 0) >= MAX_RULE_TIMEOUTS:
                continue
            try:
                if pattern.search(line, timeout=PATTERN_TIMEOUT) is not None:
                    return True
            except TimeoutError:
                self._timed_out[text] = self._timed_out.get(text, 0) + 1
                self.timeouts.append(text)
        return False

    def _is_progress(self, block: bytes, start: int, end: int) -> bool:
        if self.pattern.search(block, start, end) is None and not self.user:
            return False
        return self.is_progress_line(block[start:end])

    def first(self, block: bytes) -> int | None:
        return self._edge(block, forward=True)

    def last(self, block: bytes) -> int | None:
        return self._edge(block, forward=False)

    def _edge(self, block: bytes, forward: bool) -> int | None:
        """The start of the first (forward) or the last progress line of the block."""
        lines = _lines_forward if forward else _lines_backward
        for start, end in lines(block, self.LOOK):
            if self._is_progress(block, start, end):
                return start
        found = self._by_default(block, forward) + self._by_user(block, forward)
        return (min if forward else max)(found, default=None)

    def _by_default(self, block: bytes, forward: bool) -> list[int]:
        """The default patterns tried only on the lines that hold one of their literals
        (PROGRESS_LITERALS, in any case), found by bytes.find on the block lowered, in C: `re`
        tries the joined pattern at every byte (55 ns a byte of empty or short lines), the finds
        are memchr-fast. Lines that look like progress but tell of errors cost one try each."""
        lowered = block.lower()
        for start, end in _literal_lines(lowered, forward):
            if self.pattern.search(block, start, end) is not None and \
                    self._tells_no_error(block[start:end]):
                return [start]
        return []

    def _by_user(self, block: bytes, forward: bool) -> list[int]:
        # Line by line, never the block at once: `^` and `$` are a line's ends, and a pattern
        # that runs away does so on one line, within the timeout.
        if not self.user:
            return []
        lines = _lines_forward if forward else _lines_backward
        for start, end in lines(block, len(block) + 1):
            line = block[start:end]
            if self._user_matches(line) and self._tells_no_error(line):
                return [start]
        return []
