"""The adversarial style: ordinary lines that hold every keyword of the catalogue and match no
pattern.

Built at bench time from what logscan looks for, so it follows the rules as they change:

- every keyword of every rule and signal that has patterns (rules/*.toml, rules/signals/*.toml,
  through logscan.catalogue.load_catalogue().keywords());
- every literal a native parser declares (logscan.scan.lineparse.CANDIDATES, the literal
  pre-filter of logscan.scan.finders), and the progress finder's literals
  (logscan.scan.finders.PROGRESS_LITERALS).

Each keyword is put, as a quoted piece of data, into a python logging line a training script
could print (a data sample, a tokenizer's vocabulary, a config dump). A line is kept only if,
prefixes stripped as logscan strips them, no rule or signal pattern matches it
(Rule.match is None) and no native parser takes it (the parser the literal feeds returns
nothing); several phrasings are tried per keyword. A keyword that no phrasing can hide (a parser
that takes any line holding its literal: `DDP launch:`, `torchrun env`) is left out and listed by
`python bench/adversarial.py`.

Only logscan is read; nothing in it is changed.
"""

from __future__ import annotations

import random
import sys

# (prefix-free) phrasings; {k} is the keyword, {n} a number
PHRASINGS = (
    "INFO data: sample {n} text=\"..{k}..\" tokens=512",
    "INFO data: sample {n} text=<<{k}>> tokens=512",
    "INFO tokenizer: vocab entry {n} is x{k}x",
    "INFO config: key_{n}=[{k}] (unchanged)",
    "INFO data: sample {n} text=\"{k_lower}\" (lowered from the corpus)",
)


def _parsers():
    from logscan.scan import lineparse

    by_name = {}
    for candidates in lineparse.CANDIDATES:
        by_name.setdefault(candidates.parser, getattr(lineparse, candidates.parser))
    return by_name


def catalogue_words() -> tuple[list[str], list[str], list[str]]:
    """(catalogue keywords, native parsers' literals, progress literals), each sorted."""
    from logscan.scan import finders, lineparse
    from logscan.catalogue import load_catalogue

    keywords = sorted(load_catalogue().keywords())
    literals = sorted({lit.decode("utf-8") for c in lineparse.CANDIDATES for lit in c.literals})
    progress = sorted(lit.decode("utf-8") for lit in getattr(finders, "PROGRESS_LITERALS", ()))
    return keywords, literals, progress


def quiet_lines() -> tuple[list[str], list[str]]:
    """(one line body per keyword that matches nothing, keywords that could not be hidden)."""
    from logscan.catalogue import load_catalogue
    from logscan.scan.prefixes import strip_prefixes

    matchers = load_catalogue().matchers
    parsers = _parsers()
    keywords, literals, progress = catalogue_words()
    words = list(dict.fromkeys([*keywords, *literals, *progress]))
    kept, skipped = [], []
    for n, word in enumerate(words):
        for phrasing in PHRASINGS:
            body = phrasing.format(k=word, k_lower=word.lower(), n=1000 + n)
            if word not in body:
                continue
            line = f"2026-11-29 18:00:00,000 {body}"
            stripped = strip_prefixes(line).body
            if any(rule.match(stripped) is not None for rule in matchers):
                continue
            if any(parser(stripped) for parser in parsers.values()):
                continue
            kept.append(body)
            break
        else:
            skipped.append(word)
    return kept, skipped


def adversarial(rng: random.Random, node_rank: int):
    """A python logging step line, then one keyword line, every step; the keywords in turn."""
    from styles_frameworks import BATCH, _asctime

    bodies, _ = quiet_lines()
    losses = [f"{rng.gauss(2.1, 0.1):.4f}" for _ in range(997)]
    total = 500_000
    step = 0
    while True:
        lines = []
        for s in range(step + 1, step + BATCH + 1):
            t = _asctime(s)
            lines.append(f"{t} INFO train: step {s}/{total} loss={losses[s % 997]} lr=2.9e-04")
            lines.append(f"{t} {bodies[s % len(bodies)]}")
        step += BATCH
        yield lines


def main() -> None:
    keywords, literals, progress = catalogue_words()
    kept, skipped = quiet_lines()
    print(f"{len(keywords)} catalogue keywords, {len(literals)} parser literals, "
          f"{len(progress)} progress literals: {len(kept)} quiet lines")
    for word in skipped:
        print(f"left out (no phrasing hides it): {word!r}")
    if "-v" in sys.argv:
        for body in kept:
            print(body)


if __name__ == "__main__":
    main()
