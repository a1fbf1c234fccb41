"""`logscan rules` lists the catalogue; `logscan rules explain ID` prints one rule's documentation.

The catalogue is the one `scan` would use: the built-in rules, the config file's `rules`
directories and every `--rules DIR`. On a terminal (or with $COLUMNS set) the summaries wrap
between words to its width; in a pipe each rule is one line.
"""

from __future__ import annotations

import textwrap
from typing import Annotated

import typer

from logscan.cli import LogscanCommand
from logscan.cli.exit_codes import RULES_EXIT_HELP
from logscan.cli.common import emit, fail, load_settings, text
from logscan.cli.options import ConfigFile, Isolated, RuleDirs
from logscan.vocabulary import RuleKind

rules_app = typer.Typer(add_completion=False, rich_markup_mode=None, epilog=RULES_EXIT_HELP,
                        help="List the rules, or explain one.")


def register(app: typer.Typer) -> None:
    app.add_typer(rules_app, name="rules", epilog=RULES_EXIT_HELP)


def _catalogue(rule_dirs: list[str], config, isolated: bool):
    from logscan.catalogue import load_catalogue
    from logscan.errors import LogscanError

    settings = load_settings({"rule_dirs": rule_dirs}, config, isolated)
    try:
        return load_catalogue(settings.rule_dirs)
    except LogscanError as exc:
        fail(str(exc))


@rules_app.callback(invoke_without_command=True)
def rules_list(ctx: typer.Context, rules: RuleDirs = [], config: ConfigFile = None,
               isolated: Isolated = False) -> None:
    """List every rule: id, severity, summary."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = (rules, config, isolated)
        return
    from logscan.render.inert import inert

    catalogue = _catalogue(rules, config, isolated)
    width = max(len(r) for r in catalogue.rules)
    lead = width + 2 + SEVERITY_COLUMN + 2
    columns = _columns()
    # The summary wraps between words within the line; at least a few words a line, or the
    # terminal wraps it instead.
    room = max(columns - lead, MIN_SUMMARY) if columns is not None else None
    out = []
    for rule in sorted(catalogue.rules.values(), key=lambda r: r.id):
        summary = inert(text(rule.summary))
        lines = (textwrap.wrap(summary, room, break_long_words=False, break_on_hyphens=False)
                 if room is not None else [summary]) or [""]
        out.append(f"{rule.id:{width}}  {rule.severity:{SEVERITY_COLUMN}}  {lines[0]}".rstrip() + "\n")
        out += [" " * lead + line + "\n" for line in lines[1:]]
    emit("".join(out))


SEVERITY_COLUMN = 7
MIN_SUMMARY = 24


def _columns() -> int | None:
    """The terminal's width, or $COLUMNS where it is set; None in a pipe without it: one line a
    rule, for grep."""
    import os
    import shutil
    import sys

    if sys.stdout is not None and sys.stdout.isatty() or os.environ.get("COLUMNS", "").strip().isdigit():
        return shutil.get_terminal_size().columns
    return None


@rules_app.command("explain", cls=LogscanCommand)
def rules_explain(ctx: typer.Context, rule_id: Annotated[str, typer.Argument(metavar="ID", help="A rule id (see 'logscan rules').")],
                  rules: RuleDirs = []) -> None:
    """Print one rule's documentation."""
    from logscan.render.inert import inert

    parent_rules, config, isolated = ctx.obj or ([], None, False)
    catalogue = _catalogue([*parent_rules, *rules], config, isolated)
    rule = catalogue.get(rule_id)
    if rule is None:
        fail(f"unknown rule id {rule_id!r} (see 'logscan rules')")
    severity = "" if rule.kind == RuleKind.HARMLESS else \
        f"{rule.severity if rule.kind != RuleKind.SIGNAL else RuleKind.SIGNAL}, "
    head = f"{rule.id} ({rule.kind}, {severity}stage {rule.stage})"
    sections = [head, "", inert(text(rule.summary)), ""]
    for title, key in (("What it detects", "what"), ("Why it matters", "why"),
                       ("Example", "example"), ("How to fix", "fix")):
        if key in rule.docs:  # a known-harmless entry has its meaning and an example only
            sections += [f"## {title}", inert(text(rule.docs[key])), ""]
    if rule.reuses:
        sections += ["## Lines", f"those of the signal {inert(text(rule.reuses))}", ""]
    if rule.hint:
        sections += ["## Hint", inert(text(rule.hint)), ""]
    if rule.references:
        sections += ["## References", *(f"- {inert(text(r))}" for r in rule.references), ""]
    emit("\n".join(sections))
