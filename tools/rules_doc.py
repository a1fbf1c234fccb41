"""Write docs/rules.md from the rule catalogue: the page is generated, never edited by hand.

    python tools/rules_doc.py           # rewrite docs/rules.md
    python tools/rules_doc.py --check   # exit 1 when docs/rules.md is not what the catalogue makes

tests/test_docs.py runs the check, so a rule added, renamed or reworded without the page fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

from logscan.catalogue import load_catalogue
from logscan.vocabulary import RuleKind, RunStage

PAGE = Path(__file__).resolve().parent.parent / "docs" / "rules.md"

INTRO = """\
# Rules

Generated from the catalogue in `rules/` by `python tools/rules_doc.py`; do not edit by hand.
`logscan rules` prints the same list; `logscan rules explain ID` prints one rule's documentation
(what it detects, why it matters, a real example line, how to fix). How a rule file is written, and
how to add your own with `--rules DIR`: [writing-rules.md](writing-rules.md). "The guide" in the
hints is the platform's launch guide: [guide.md](guide.md).
"""

SECTIONS = (
    ("Job rules", "What `scan`, `report`, `check`, `sweep` and `watch` find in a job's logs.",
     (RuleKind.SIGNATURE, RuleKind.CODE)),
    ("Pre-flight rules", "What `logscan lint` finds in launch scripts and commands ([lint.md](lint.md)).",
     (RuleKind.LINT,)),
)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def page() -> str:
    rules = load_catalogue().rules.values()
    parts = [INTRO]
    for title, about, kinds in SECTIONS:
        parts += [f"\n## {title}\n\n{about}\n\n",
                  "| rule | severity | stage | what it means | what to do |\n",
                  "| --- | --- | --- | --- | --- |\n"]
        for rule in sorted((r for r in rules if r.kind in kinds), key=lambda r: (list(RunStage).index(r.stage), r.id)):
            parts.append(f"| `{rule.id}` | {rule.severity} | {rule.stage} | {_cell(rule.summary)} "
                         f"| {_cell(rule.hint)} |\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    text = page()
    if "--check" in argv:
        if not PAGE.is_file() or PAGE.read_text() != text:
            print(f"{PAGE.name} is out of date: run python tools/rules_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
