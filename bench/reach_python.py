"""Which lines of a log reach Python, and what brings them there.

    python bench/reach_python.py LOG [LOG ...]          # counts per candidate pattern
    python bench/reach_python.py --time LOG             # and the cost of interpreting them

Runs logscan's own Scanner survey over the log (the matcher logscan would use, Hyperscan by
default), so the lines counted are exactly those `logscan scan` hands to the line interpreter:
the confirmed candidates. Each is then attributed to the candidate patterns it matches: a
catalogue keyword (named with the rules and signals that carry it) or a native parser's
declaration (logscan.scan.lineparse). With --time: the time per line of confirming them (the
scanner's `re` alternation of every candidate pattern, run on each line Hyperscan reports), of
the rules their keywords select (Rule.match, the three costliest), and of feeding them through
a FileInterpreter as the merge does (prefix stripping, parsers and rules together).

Only reads logscan; nothing in it is changed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--time", action="store_true", help="time the interpretation too")
    parser.add_argument("--top", type=int, default=8, help="patterns shown (default 8)")
    args = parser.parse_args()

    from logscan.catalogue import load_catalogue
    from logscan.scan.interpret import FileInterpreter
    from logscan.scan.scanner import Scanner, wanted_lines

    catalogue = load_catalogue()
    scanner = Scanner(catalogue)
    carriers: dict[bytes, list[str]] = {}
    for rule in scanner.matchers:
        for kw in rule.keywords:
            carriers.setdefault(kw.encode(), []).append(rule.id)
    wanted = wanted_lines(kw.encode() for r in scanner.matchers for kw in r.keywords)
    compiled = [(re.compile(c.pattern, re.MULTILINE), c) for c in wanted]

    for log in args.logs:
        start = time.perf_counter()
        found = scanner.survey(log)
        survey = time.perf_counter() - start
        lines = found.newlines
        counts: Counter = Counter()
        for _, raw in found.candidates:
            for pattern, cand in compiled:
                if pattern.search(raw):
                    if cand.parser == "catalogue":
                        lit = cand.literals[0]
                        counts[f"keyword {lit.decode()!r} of {', '.join(carriers.get(lit, ['?']))}"] += 1
                    else:
                        counts[f"{cand.parser} {cand.literals[0].decode()!r}"] += 1
        print(f"{log}: {lines:,} lines, {len(found.candidates):,} reach Python "
              f"({100 * len(found.candidates) / max(lines, 1):.2f}%); survey {survey:.2f} s "
              f"(matcher {type(scanner.finder).__name__})")
        for name, n in counts.most_common(args.top):
            print(f"  {n:>10,}  {name}")
        if args.time and found.candidates:
            confirm = scanner.candidates.search
            start = time.perf_counter()
            for _, raw in found.candidates:
                confirm(raw)
            spent = time.perf_counter() - start
            print(f"  confirming them (the scanner's one `re` of every candidate pattern): "
                  f"{spent:.2f} s, {1e6 * spent / len(found.candidates):.0f} µs a line")
            from logscan.scan.prefixes import strip_prefixes

            per_rule: Counter = Counter()
            tried: Counter = Counter()
            for _, raw in found.candidates:
                body = strip_prefixes(raw.decode("utf-8", "replace")).body
                for rule in scanner.matchers:
                    if any(kw in body for kw in rule.keywords):
                        start = time.perf_counter()
                        rule.match(body)
                        per_rule[rule.id] += time.perf_counter() - start
                        tried[rule.id] += 1
            for rule_id, spent in per_rule.most_common(3):
                print(f"  rule {rule_id}: tried on {tried[rule_id]:,} lines, {spent:.2f} s, "
                      f"{1e6 * spent / tried[rule_id]:.0f} µs a line")
            interpreter = FileInterpreter(scanner.matchers, log, log, None, None)
            start = time.perf_counter()
            for index, raw in found.candidates:
                interpreter.line(raw, index + 1)
            spent = time.perf_counter() - start
            print(f"  interpreting them: {spent:.2f} s, "
                  f"{1e6 * spent / len(found.candidates):.0f} µs a line")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
