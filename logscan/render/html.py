"""The post-mortem page: one self-contained HTML file (`logscan report PATH... -o report.html`).

Verdict and root cause at the top; a timeline with one row per Worker (its ranks under it, folded
in a <details>), on the clock where the lines carry times and in stage order otherwise (the page
says which); the first failure marked and cascades linked to their cause; every finding with its
evidence and hint; the Worker table. No network asset and no script: it opens from a shared drive.
All log text is made inert (control characters shown as escapes) and then HTML-escaped.
"""

from __future__ import annotations

from html import escape

from logscan.diagnosis import Diagnosis, Finding, number_ranges, place_label
from logscan.render.context import RenderContext
from logscan.render.inert import inert
from logscan.render.order import (first_failure_apart, novel_lines_reason, readable_time, straggler_line,
                                  stuck_lines)
from logscan.render.timeline import LEGEND, SYMBOLS, TRAINED, Layout, Row, layout
from logscan.vocabulary import TIMELINE, MarkStage, TimeAxis

CSS = """
:root { --bad: #b3261e; --good: #1b6e20; --warn: #8a5a00; --muted: #5f6368; --line: #dadce0; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #202124; background: #fff; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 20px; margin: 8px 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 2px 0 6px; padding: 6px 8px;
      background: #f6f8fa; border-radius: 4px; }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 4px; color: #fff; font-weight: 700; }
.verdict.FAILED, .verdict.INCONCLUSIVE { background: var(--bad); }
.verdict.INCONCLUSIVE { background: var(--warn); }
.verdict.HEALTHY { background: var(--good); } .verdict.RUNNING { background: #1a73e8; }
.facts { color: var(--muted); margin: 4px 0; }
.card { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 6px;
        padding: 8px 12px; margin: 10px 0; }
.card.warning { border-left-color: var(--warn); } .card.info { border-left-color: #1a73e8; }
.card.cascade { border-left-color: var(--line); }
.label-line { color: var(--muted); margin-top: 6px; }
.hint { color: var(--good); } .where { color: var(--muted); }
.sev { font-weight: 700; text-transform: uppercase; font-size: 12px; margin-right: 6px; }
.sev.error { color: var(--bad); } .sev.warning { color: var(--warn); }
ul.cascades { margin: 4px 0; padding-left: 18px; } ul.cascades li { overflow-wrap: anywhere; }
.timeline { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; }
.axis, .tl-row { display: grid; grid-template-columns: 150px 1fr 300px; gap: 10px; align-items: center; }
.axis { color: var(--muted); font-size: 12px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.axis .ticks { position: relative; height: 30px; }
.axis .ticks span:nth-child(even) { top: 15px; }  /* staggered: neighbouring headings never meet */
@media (max-width: 960px) { .axis, .tl-row { grid-template-columns: 96px 1fr 200px; } }
.axis .ticks span { position: absolute; transform: translateX(-50%); white-space: nowrap; line-height: 14px; }
.axis .ticks span.first { transform: none; } .axis .ticks span.last { transform: translateX(-100%); }
details.worker-row > summary { list-style: none; cursor: pointer; }
details.worker-row > summary::-webkit-details-marker { display: none; }
.tl-row { min-height: 26px; border-bottom: 1px dotted var(--line); }
.tl-row .label { font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tl-row.rank .label { font-weight: 400; padding-left: 18px; }
details.worker-row > summary .label::before { content: "\\25B8  "; color: var(--muted); }
details.worker-row[open] > summary .label::before { content: "\\25BE  "; }
.bar { position: relative; height: 18px; }
.bar .span { position: absolute; top: 8px; height: 2px; background: #9aa0a6; }
.bar .train { position: absolute; top: 6px; height: 6px; background: #34a853; border-radius: 3px; }
.mark { position: absolute; top: 1px; width: 16px; height: 16px; margin-left: -8px; border-radius: 50%;
        font: 700 10px/16px system-ui, sans-serif; text-align: center; color: #fff; background: #5f6368; }
.mark.failure { background: var(--bad); } .mark.first-batch, .mark.last-progress { background: #1b6e20; }
.mark.end { background: #202124; border-radius: 2px; width: 6px; margin-left: -3px; }
.status { font-size: 12px; color: var(--muted); overflow-wrap: anywhere; }
.root-cause .label, .root-cause .status { color: var(--bad); }
.badge { display: inline-block; font-size: 11px; font-weight: 700; border-radius: 3px; padding: 0 5px;
         margin-right: 4px; color: #fff; background: var(--bad); }
.badge.first { background: #e37400; }
.badge.novel { background: #6a1b9a; }
.tl-row.missing .bar { border: 1px dashed var(--bad); border-radius: 4px; height: 14px; }
.legend { color: var(--muted); font-size: 12px; margin-top: 6px; }
.legend .mark { position: static; display: inline-block; margin: 0 3px 0 8px; vertical-align: middle; }
table.workers { border-collapse: collapse; width: 100%; }
table.workers th, table.workers td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line);
                                     vertical-align: top; }
table.workers td.files { overflow-wrap: anywhere; }
footer { color: var(--muted); margin-top: 24px; font-size: 12px; }
"""


def _e(text: object) -> str:
    """Log text for the page: control characters as visible escapes, then HTML-escaped."""
    return escape(inert(str(text)), quote=True)


def _finding_ids(d: Diagnosis) -> dict[str, str]:
    return {f.fingerprint: f"f{i}" for i, f in enumerate(d.findings, 1)}


def _evidence(f: Finding, d: Diagnosis) -> str:
    """Every evidence line; a hang's straggler's own last line first, said to be that."""
    own = straggler_line(d, f)
    out = []
    for i, e in enumerate(f.evidence):
        if own is not None and i == 0:
            out.append(f'<div class="label-line">rank {f.rank} stopped here (its own last line):</div>')
        elif own is not None and i == 1:
            out.append('<div class="label-line">the ranks that waited for it:</div>')
        out.append(f'<div class="where mono">{_e(e.file)}:{e.line}</div><pre>{_e(e.text.rstrip())}</pre>')
    return "".join(out)


def _header(d: Diagnosis, ids: dict[str, str], hints: set[str]) -> str:
    root = d.root_cause
    out = [f'<h1><span class="verdict {_e(d.verdict)}">{_e(d.verdict)}</span> {_e(d.job)}</h1>']
    if root is None:  # else the root cause's card below says it
        out.append(f'<p class="summary">{_e(d.summary())}</p>')
    notes = [f"verdict: {d.verdict_reason}"] if d.verdict_reason else []
    if d.job_status:
        notes.append(f"platform job status: {d.job_status}")
    if d.config_file:
        notes.append(f"settings from {d.config_file}")
    first = first_failure_apart(d)
    if first is not None:
        notes.append("first failure: " + place_label(first.node_rank, first.rank).strip(" ()"))
    if notes:
        out.append(f'<p class="facts">{_e(" · ".join(notes))}</p>')
    if root is not None:
        out.append('<section id="root-cause"><h2>Root cause</h2>')
        out.append(_card(root, d, ids, hints, heading="root cause"))
        out.append("</section>")
    return "\n".join(out)


def _card(f: Finding, d: Diagnosis, ids: dict[str, str], hints: set[str],
          heading: str | None = None) -> str:
    """One finding; a hint the page showed already is not shown again."""
    kind = "cascade" if f.is_consequence else f.severity
    out = [f'<div class="card {kind}" id="{ids[f.fingerprint]}">',
           f'<div><span class="sev {_e(f.severity)}">{_e(heading or f.severity)}</span>'
           f'<strong>{_e(f.heading)}</strong>: {_e(f.message)}</div>']
    if f.caused_by:
        target = ids.get(f.caused_by)
        if target:
            out.append(f'<div class="where">a consequence of <a href="#{target}">the root cause</a></div>')
    out.append(_evidence(f, d))
    if f.hint and f.hint not in hints:
        hints.add(f.hint)
        out.append(f'<div class="hint">hint: {_e(f.hint)}</div>')
    children = d.consequences_of(f)
    if children:
        out.append(f"<div>then, as a consequence ({len(children)}):</div><ul class=\"cascades\">")
        out += [f'<li><a href="#{ids[c.fingerprint]}">{_e(c.heading)}</a>: {_e(c.message)}</li>'
                for c in children]
        out.append("</ul>")
    out.append("</div>")
    return "\n".join(out)


def _marks(row: Row) -> str:
    if not row.marks:
        return ""
    xs = sorted(p.x for p in row.marks)
    out = [f'<div class="span" style="left:{xs[0] * 100:.2f}%;width:{(xs[-1] - xs[0]) * 100:.2f}%"></div>']
    trained = sorted(p.x for p in row.marks if p.mark.stage in TRAINED)
    if trained:
        out.append(f'<div class="train" style="left:{trained[0] * 100:.2f}%;'
                   f'width:{max(0.5, (trained[-1] - trained[0]) * 100):.2f}%"></div>')
    for p in row.marks:
        m = p.mark
        when = f" at {readable_time(m.time)}" if m.time else ""
        title = f"{m.stage}{when}: {m.file}:{m.line}\n{m.text.strip()}"
        stage = m.stage.replace(" ", "-")
        symbol = "" if m.stage == MarkStage.END else SYMBOLS.get(m.stage, "?")
        out.append(f'<span class="mark {stage}" style="left:{p.x * 100:.2f}%" title="{_e(title)}">'
                   f"{_e(symbol)}</span>")
    return "".join(out)


def _row(row: Row, ids: dict[str, str], d: Diagnosis, rank: bool = False) -> str:
    classes = ["tl-row"] + (["rank"] if rank else []) + (["root-cause"] if row.root_cause else []) \
        + (["first-failure"] if row.first_failure else []) + (["missing"] if row.worker is None else [])
    badges = ""
    root = d.root_cause.fingerprint if d.root_cause is not None else None
    if row.root_cause and root in ids:
        badges += f'<a class="badge" href="#{ids[root]}">root cause</a>'
    elif row.root_cause:
        badges += '<span class="badge">root cause</span>'
    if row.first_failure and not row.root_cause:  # one role a row: the root cause says it
        badges += '<span class="badge first">first failure</span>'
    novel = _novel_here(row, d, rank)
    if novel:
        badges += f'<a class="badge novel" href="#novel-lines">{novel} novel line{"s" if novel > 1 else ""}</a>'
    links = ""
    if row.worker is not None and not rank:
        keys = [k for k in row.worker.findings if k in ids and k != root]
        links = " ".join(f'<a href="#{ids[k]}">{i}</a>' for i, k in enumerate(keys, 1))
        links = f" · findings {links}" if links else ""
    if row.worker is None:
        status = "no log"
    elif not rank:
        status = row.worker.stage
    else:
        status = row.afterwards if row.root_cause else (row.brief or row.status)
    data = f' data-node-rank="{row.node_rank}"' if row.node_rank is not None else ""
    return (f'<div class="{" ".join(classes)}"{data}><span class="label" title="{_e(row.label)}">{_e(row.label)}</span>'
            f'<div class="bar">{_marks(row)}</div>'
            f'<div class="status" title="{_e(row.status)}">{badges}{_e(status)}{links}</div></div>')


def _axis(lay: Layout) -> str:
    if lay.axis == TimeAxis.TIME:
        ticks = (f'<span class="first" style="left:0%">{_e(lay.start.strftime("%H:%M:%S"))}</span>'
                 f'<span class="last" style="left:100%">{_e(lay.end.strftime("%H:%M:%S"))}</span>')
    else:
        last = len(TIMELINE) - 1
        ticks = "".join(
            f'<span class="{"first" if i == 0 else "last" if i == last else ""}" '
            f'style="left:{i / last * 100:.2f}%">{_e(LEGEND[s])}</span>' for i, s in enumerate(TIMELINE))
    return f'<div class="axis"><span>Worker</span><div class="ticks">{ticks}</div><span>where it stopped</span></div>'


def _timeline(d: Diagnosis, ids: dict[str, str]) -> str:
    lay = layout(d, ranks=True)
    out = ['<section id="timeline"><h2>Timeline</h2>',
           f'<p class="facts" id="time-axis" data-axis="{lay.axis}">{_e("Drawn " + lay.describe())}. '
           "Click a Worker to see its ranks.</p>", '<div class="timeline">', _axis(lay)]
    rows = list(lay.rows)
    i = 0
    while i < len(rows):
        row = rows[i]
        ranks = []
        while i + 1 < len(rows) and rows[i + 1].process is not None:
            ranks.append(rows[i + 1])
            i += 1
        if row.worker is None:
            out.append(_row(row, ids, d))
        else:
            open_ = " open" if any(r.root_cause or r.first_failure for r in ranks) and len(d.workers) <= 8 else ""
            out.append(f'<details class="worker-row" data-worker="{_e(row.label)}"{open_}><summary>'
                       f"{_row(row, ids, d)}</summary>")
            out += [_row(r, ids, d, rank=True) for r in ranks]
            if not ranks:
                out.append('<div class="tl-row rank"><span class="label">no rank printed its env line</span></div>')
            out.append("</details>")
        i += 1
    legend = "".join(f'<span class="mark {s.replace(" ", "-")}">{"" if s == MarkStage.END else _e(SYMBOLS[s])}'
                     f"</span>{_e(s)}" for s in TIMELINE)
    out += ["</div>", f'<div class="legend">{legend}<span style="margin-left:10px">green bar: training</span></div>',
            "</section>"]
    return "\n".join(out)


def _novel_here(row: Row, d: Diagnosis, rank: bool) -> int:
    """How many of the novel lines this Worker's row holds (by its files); a rank's row keeps its
    one badge, its role."""
    if not d.novel_lines or row.worker is None or rank:
        return 0
    return sum(n.file in row.worker.files for n in d.novel_lines)


def _novel(d: Diagnosis) -> str:
    """The failing rank's lines its peers did not print (logscan.diagnose.novel_lines)."""
    if not d.novel_lines:
        return ""
    why = novel_lines_reason(d)
    items = "".join(f'<li><div class="where mono">{_e(n.file)}:{n.line} · {_e(n.why)} · score {n.score:.2f}</div>'
                    f"<pre>{_e(n.text.rstrip())}</pre></li>" for n in d.novel_lines)
    return (f'<section id="novel-lines"><h2>Lines that set the failing rank apart</h2>'
            f'<p class="facts">{_e(why)}; the most telling first.</p><ul>{items}</ul></section>')


def _harmless(d: Diagnosis) -> str:
    """The known-harmless warnings the logs hold, each once (logscan.diagnose.harmless): what each
    means and where it first is; the line itself is in the log (its collector's raw times would
    read as no other time on the page does)."""
    if not d.harmless:
        return ""
    items = "".join(
        f'<li><strong>{_e(n.rule)}</strong>{_e(f" ({n.count} lines)" if n.count > 1 else "")}: {_e(n.meaning)}'
        f'<div class="where mono">{_e(n.file)}:{n.line}</div></li>'
        for n in d.harmless)
    return (f'<section id="harmless"><h2>Known-harmless warnings</h2>'
            f'<p class="facts">None of them is a failure.</p><ul>{items}</ul></section>')


def _stuck(d: Diagnosis) -> str:
    """For a hang: the last line of each waiting rank (or Worker), and when."""
    items = []
    entries = stuck_lines(d)
    for who, mark, written in entries:
        when = f"at {readable_time(mark.time)}" if mark.time else (
            f"log last written {readable_time(written)}" if written else "")
        items.append(f"<li><strong>{_e(who)}</strong> <span class=\"where\">{_e(when)}</span>"
                     f'<div class="where mono">{_e(mark.file)}:{mark.line}</div><pre>{_e(mark.text.rstrip())}</pre></li>')
    if not items:
        return ""
    note = (f'<p class="facts" id="clock-note">{_e(d.clock_note)}</p>'
            if d.clock_note and not all(mark.time for _, mark, _ in entries) else "")
    return ('<section id="stuck"><h2>Where the waiting ranks stopped</h2>' + note + "<ul>" + "".join(items)
            + "</ul></section>")


def _findings(d: Diagnosis, ids: dict[str, str], hints: set[str]) -> str:
    """Every finding but the root cause, whose card heads the page."""
    others = [f for f in d.findings if not f.is_root]
    if not others:
        said = "No other finding." if d.findings else "No finding."
        return f'<section id="findings"><h2>Findings</h2><p>{said}</p></section>'
    heading = "Every other finding" if len(others) < len(d.findings) else "Findings"
    out = [f'<section id="findings"><h2>{heading}</h2>']
    out += [_card(f, d, ids, hints) for f in others]
    out.append("</section>")
    return "\n".join(out)


def _workers(d: Diagnosis) -> str:
    head = ("node", "host", "nnodes", "gpus", "procs", "master", "ranks", "stage", "last activity", "logs")
    rows = []
    for w in d.workers:
        cells = (w.node_rank if w.node_rank is not None else "?", w.host or "-", w.nnodes, w.gpus_per_node,
                 w.total_procs, w.master or "-", number_ranges(w.ranks, ",") or "-", w.stage,
                 readable_time(w.last_known) if w.last_known else "not known")
        rows.append("<tr>" + "".join(f"<td>{_e('-' if c is None else c)}</td>" for c in cells)
                    + f'<td class="files mono">{"<br>".join(_e(p) for p in w.files)}</td></tr>')
    return ('<section id="workers"><h2>Workers</h2><table class="workers"><thead><tr>'
            + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></section>")


def render(d: Diagnosis, context: RenderContext) -> str:
    ids = _finding_ids(d)
    hints: set[str] = set()
    notes = "".join(f"<li>{_e(n.path)}: {_e(n.problem)}</li>" for n in d.inputs)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # No script, no network: the page is data only.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">",
        f"<title>logscan: {_e(d.verdict)} {_e(d.job)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        _header(d, ids, hints),
        _timeline(d, ids),
        _novel(d) if d.unexplained else "",
        _stuck(d),
        _findings(d, ids, hints),
        "" if d.unexplained else _novel(d),
        _harmless(d),
        _workers(d),
        f'<section id="inputs"><h2>Inputs</h2><ul>{notes}</ul></section>' if notes else "",
        f"<footer>{d.files_scanned} file(s), {d.lines_scanned} lines, {len(d.findings)} finding(s). "
        "Made by logscan.</footer>",
        "</main></body></html>",
        "",
    ])
