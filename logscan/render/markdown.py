"""The human report as Markdown: for GitHub step summaries, PR comments and incident docs.

Log text goes only into fenced code blocks (a fence longer than any backtick run in it) or
through `md_inline`, which escapes what Markdown and HTML would act on; control characters are
made visible first, and no line of the report starts with `::`.
"""

from __future__ import annotations

import re

from logscan.diagnosis import Diagnosis, Finding, number_ranges
from logscan.render.context import RenderContext
from logscan.render.inert import inert, no_workflow_commands
from logscan.render.order import ordered
from logscan.vocabulary import Severity, Verdict

MAX_TABLE_ROWS = 64
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")


def md_inline(text: str) -> str:
    text = inert(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN.sub(r"\\\1", text)


def _fence(lines: list[str]) -> list[str]:
    body = [inert(line) for line in lines]
    longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", *body, fence]


def _finding(d: Diagnosis, f: Finding) -> list[str]:
    icon = {Severity.ERROR: "❌", Severity.WARNING: "⚠️", Severity.INFO: "ℹ️"}[f.severity]
    lead = "**root cause** " if f.is_root else ("↳ " if f.is_consequence else "")
    out = [f"- {icon} {lead}{md_inline(f.title)}"]
    if f.evidence:
        out += ["", *("  " + line for line in _fence(
            [f"{e.file}:{e.line}  {e.text.strip()}" for e in f.evidence]))]
    out += ["", f"  *hint:* {md_inline(f.hint)}", ""]
    return out


def render(d: Diagnosis, context: RenderContext) -> str:
    mark = {Verdict.HEALTHY: "✅", Verdict.RUNNING: "⏳"}.get(d.verdict, "❌")
    out = [f"## {mark} logscan: {md_inline(d.summary())}", ""]
    if d.verdict_reason:
        out += [f"*why:* {md_inline(d.verdict_reason)}", ""]
    if d.job_status:
        out += [f"platform job status: {md_inline(d.job_status)}", ""]
    if d.config_file:
        out += [f"settings from {md_inline(d.config_file)}", ""]
    if d.workers:
        out += ["| node | host | nnodes | gpus | procs | ranks | stage | files |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for w in d.workers[:MAX_TABLE_ROWS]:
            cells = [w.node_rank if w.node_rank is not None else "?", w.host or "-",
                     _dash(w.nnodes), _dash(w.gpus_per_node), _dash(w.total_procs),
                     number_ranges(w.ranks, ",") or "-", w.stage, ", ".join(w.files)]
            out.append("| " + " | ".join(md_inline(str(c)) for c in cells) + " |")
        if len(d.workers) > MAX_TABLE_ROWS:
            out.append(f"\n… {len(d.workers) - MAX_TABLE_ROWS} more Worker(s) not shown")
        out.append("")
    findings = ordered(d)
    if findings:
        out += [f"### Findings ({len(findings)})", ""]
        for f in findings:
            out += _finding(d, f)
    if d.harmless:
        out += [f"### Known-harmless warnings ({len(d.harmless)}, none of them a failure)", ""]
        out += [f"- `{md_inline(n.rule)}` ({md_inline(f'{n.file}:{n.line}')}"
                f"{f', {n.count} lines' if n.count > 1 else ''}): {md_inline(n.meaning)}" for n in d.harmless]
        out.append("")
    for note in d.inputs:
        out.append(f"- note: {md_inline(note.path)}: {md_inline(note.problem)}")
    out += ["", f"<sub>{d.files_scanned} file(s), {d.lines_scanned} lines, "
                f"{len(d.findings)} finding(s)</sub>", ""]
    return no_workflow_commands("\n".join(out))


def _dash(value) -> str:
    return "-" if value is None else str(value)
