"""Self-contained static HTML reports: one per run, one per benchmark ranking group, one per
suite, written beside the Markdown.

A page needs nothing but a browser: the styles are inline, the bars and heat maps are inline
SVG or coloured table cells, there is no script and no external asset (no CDN, no font, no
image link), so it opens from a file, an archive or a CI artifact alike. Every text that
comes from the evaluated repository or the benchmark (propositions, evidence quotes, search
patterns, gate output, names) goes through `_e` (HTML escaping), so a `<script>` in a quote
renders as text and never runs. Numbers use the one half-up rounding rule; NULL prints "—",
never 0. The content is deterministic (no clock), so an unchanged evaluation renders the
same bytes.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalflow.domain.cells import listed
from evalflow.domain.rounding import format_half_up
from evalflow.reports.markdown import (
    ReportInput,
    _gate_detail,
    _majority_verdicts,
    _prd_title,
    _stable,
)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;
max-width:100em;padding:0 1em;color:#1b1b1b;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.heat td.cell{text-align:center;min-width:3.5em}
.prio{font-weight:bold;padding:0 .3em;border-radius:3px;background:#eee}
.P0{background:#fdd}.P1{background:#ffe9c7}.P2{background:#e8e8e8;color:#666}
.MET{color:#1a7f37;font-weight:bold}.UNMET{color:#b42318;font-weight:bold}
.UNSCORED{color:#7a5d00;font-weight:bold}
.fail{color:#b42318;font-weight:bold}.pass{color:#1a7f37}
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;white-space:pre-wrap;max-width:60em}
code{background:#f6f8fa;padding:0 .2em;overflow-wrap:anywhere}img{max-width:100%}
.muted{color:#666}ul{margin:.2em 0;padding-left:1.2em}
table.checks{width:100%;table-layout:fixed}td.id{white-space:nowrap}
table.checks th:nth-child(1){width:8em}table.checks th:nth-child(2){width:20%}
table.checks th:nth-child(3){width:22%}.why{font-size:.9em;color:#444}
"""
_BAR_WIDTH = 160
_BAR_HEIGHT = 14


def _e(value: object) -> str:
    """Escaped text (quotes too, so it is safe inside an attribute)."""
    return html.escape("" if value is None else str(value), quote=True)


def _null(value: object) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def _num(value: object, places: int = 2) -> str:
    return "—" if _null(value) else format_half_up(float(value), places)  # type: ignore[arg-type]


def _page(title: str, body: Iterable[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A table of cells that are already HTML (each caller escapes its texts)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    attr = f' class="{cls}"' if cls else ""
    return f"<table{attr}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def _td(text: str, cls: str = "") -> str:
    return f'<td class="{cls}">{text}</td>' if cls else f"<td>{text}</td>"


def ci_bar(value: object, low: object, high: object, *, lo: float = 0.0, hi: float = 1.0) -> str:
    """An inline SVG bar: the interval [low, high] as a line, the value as a dot, on the
    axis lo..hi; a NULL bound draws no interval, a NULL value no dot."""

    def x(v: float) -> float:
        share = (min(max(v, lo), hi) - lo) / (hi - lo) if hi > lo else 0.0
        return round(4 + share * (_BAR_WIDTH - 8), 1)

    mid = _BAR_HEIGHT / 2
    parts = [
        f'<line x1="4" y1="{mid}" x2="{_BAR_WIDTH - 4}" y2="{mid}" stroke="#ddd" stroke-width="1"/>'
    ]
    label = f"{_num(value)} [{_num(low)}, {_num(high)}]"
    if not _null(low) and not _null(high):
        parts.append(
            f'<line class="ci" x1="{x(float(low))}" y1="{mid}" x2="{x(float(high))}" '  # type: ignore[arg-type]
            f'y2="{mid}" stroke="#1f77b4" stroke-width="3"/>'
        )
    if not _null(value):
        parts.append(f'<circle cx="{x(float(value))}" cy="{mid}" r="3.5" fill="#d62728"/>')  # type: ignore[arg-type]
    return (
        f'<svg class="ci-bar" width="{_BAR_WIDTH}" height="{_BAR_HEIGHT}" role="img" '
        f'aria-label="{_e(label)}"><title>{_e(label)}</title>{"".join(parts)}</svg>'
    )


def _colour(score: object) -> str:
    """Red (0) → yellow (0.5) → green (1); grey when unmeasured."""
    if _null(score):
        return "#e0e0e0"
    s = min(max(float(score), 0.0), 1.0)  # type: ignore[arg-type]
    stops = ((0.0, (215, 48, 39)), (0.5, (254, 224, 139)), (1.0, (26, 152, 80)))
    (a, ca), (b, cb) = (stops[0], stops[1]) if s <= 0.5 else (stops[1], stops[2])
    t = (s - a) / (b - a)
    rgb = [round(x + (y - x) * t) for x, y in zip(ca, cb, strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _heat_cell(score: object, title: str) -> str:
    return (
        f'<td class="cell" style="background:{_colour(score)}" title="{_e(title)}">'
        f"{_num(score)}</td>"
    )


def _prio(priority: str) -> str:
    return f'<span class="prio {_e(priority)}">{_e(priority)}</span>'


def _items(raw: object) -> list[dict[str, Any]]:
    """Evidence or searches of a verdict row (a list of structs, NULL as none)."""
    return [dict(item) for item in listed(raw)]


def _evidence_html(raw: object) -> str:
    lines = []
    for item in _items(raw):
        if item.get("kind") == "run":
            output = "\n".join(str(item.get("output", "")).splitlines()[:5])
            lines.append(
                f"<li>ran <code>{_e(item.get('command'))}</code> ⇒ "
                f"{_e(item.get('expectation'))}<pre>{_e(_stable(output))}</pre></li>"
            )
            continue
        start, end = item.get("start_line"), item.get("end_line")
        where = f"{item.get('path')}:{start}" + (f"-{end}" if end not in (None, start) else "")
        quote = item.get("quote")
        lines.append(
            f"<li><code>{_e(where)}</code>" + (f"<pre>{_e(quote)}</pre>" if quote else "") + "</li>"
        )
    return (
        f'<ul class="evidence">{"".join(lines)}</ul>' if lines else '<span class="muted">—</span>'
    )


def _searches_html(raw: object) -> str:
    lines = [
        f"<li><code>{_e(s.get('pattern'))}</code> in {_e(s.get('scope'))} "
        f"({_e(s.get('hits'))} hits)</li>"
        for s in _items(raw)
    ]
    return (
        f'<ul class="searches">{"".join(lines)}</ul>' if lines else '<span class="muted">—</span>'
    )


def _verdict(majority: str) -> str:
    return f'<span class="{_e(majority)}">{_e(majority)}</span>'


def _gates_html(gates: pd.DataFrame) -> list[str]:
    if gates.empty:
        return ["<p>No gate was configured.</p>"]
    rows = []
    for row in gates.itertuples(index=False):
        status = str(row.status)
        cls = "fail" if status == "fail" else "pass" if status == "pass" else ""
        tail = str(row.output_tail) if isinstance(row.output_tail, str) else ""
        tail = "\n".join(_stable(t) for t in tail.splitlines()[-20:])
        rows.append([
            _td(_e(row.gate)),
            _td(f"<code>{_e(row.command)}</code>" if isinstance(row.command, str) else "—"),
            _td(_e(status), cls),
            _td(_e(row.category) if isinstance(row.category, str) else "—"),
            _td(_e(_stable(_gate_detail(row)))),
            _td(f"<pre>{_e(tail)}</pre>" if tail.strip() else '<span class="muted">—</span>'),
        ])  # fmt: skip
    headers = ["gate", "command", "status", "category", "detail", "output (tail)"]
    return [_table(headers, rows, "gates")]


def render_run_html(inp: ReportInput) -> str:
    """The run's report as a page: result with its bounds, the per-AC heat map with
    priorities, every check's verdict with its evidence lines and searches, the gates with
    their output tail."""
    final = inp.final
    title = f"Evaluation report — {inp.framework} on {inp.benchmark}"
    body = [f"<h1>{_e(title)}</h1>"]
    k = int(inp.votes["k"].iloc[0]) if len(inp.votes) else 0
    body.append(
        f"<p>Run <code>{_e(inp.run_key)}</code> · PRD: {_e(_prd_title(inp.prd.title))} · "
        f"baseline sha256 <code>{_e(inp.baseline_sha256[:16])}</code> · judge "
        f"<code>{_e(inp.judge_id)}</code> · k = {k} · commits <code>{_e(inp.base_sha[:12])}"
        f"</code> → <code>{_e(inp.head_sha[:12])}</code></p>"
    )
    body.append("<h2>Result</h2>")
    if bool(final["complete"]):
        headline = f"Final <strong>{_num(final['final'])}</strong> — {_e(final['band'])}"
    else:
        headline = (
            f"Final <strong>undetermined</strong>: {int(final['n_unscored'])} weighted check(s) "
            f"UNSCORED; between {_num(final['final_lower'])} and {_num(final['final_upper'])}"
        )
    if bool(final["gates_failed"]):
        headline += (
            f" · Adjusted Final <strong>{_num(final['adjusted_final'])}</strong> "
            '(<span class="fail">a gate is a confirmed ✗</span>)'
        )
    bar = ci_bar(final["final"], final["final_lower"], final["final_upper"])
    axis = "on 0–1" if bool(final["complete"]) else "its bounds on 0–1"
    body.append(f'<p id="result">{headline} {bar} <span class="muted">{axis}</span></p>')

    body.append("<h2>Acceptance criteria</h2>")
    rows = []
    for row in inp.ac.sort_values("ac_id").itertuples(index=False):
        rows.append([
            _td(_e(row.ac_id)), _td(f"{_e(row.story_id)} {_prio(str(row.priority))}"),
            _td(f"{int(row.i_met)}/{int(row.i_total)}", "num"),
            _td(f"{int(row.t_met)}/{int(row.t_total)}", "num"),
            _heat_cell(row.ac_score, f"{row.ac_id}: {_num(row.ac_score)}"),
        ])  # fmt: skip
    body.append(_table(["AC", "story", "I met", "T met", "AC_score"], rows, "heat"))

    body.append("<h2>Checks: verdict, evidence and searches</h2>")
    by_check = _majority_verdicts(inp)
    rows = []
    for _, check in inp.baseline.checks():
        row = by_check.loc[check.id].to_dict() if check.id in by_check.index else {}
        majority = str(row.get("majority", "UNSCORED"))
        votes = "/".join(str(int(row.get(c, 0))) for c in ("met_votes", "unmet_votes",
                                                           "unscored_votes"))  # fmt: skip
        level = f" ({check.level})" if check.kind == "T" else ""
        rows.append([
            _td(f"<code>{_e(check.id)}</code><br>{_e(check.kind + level)}", "id"),
            _td(_e(check.proposition)),
            _td(_verdict(majority) + (" (borderline)" if row.get("borderline") else "")
                + f' <span class="muted">{_e(votes)}</span><br>'
                + f'<span class="why">{_e(row.get("rationale") or "")}</span>'),
            _td(_evidence_html(row.get("evidence"))),
            _td(_searches_html(row.get("searches"))),
        ])  # fmt: skip
    headers = ["check", "proposition", "verdict (votes MET/UNMET/UNSCORED), rationale",
               "evidence", "searches"]  # fmt: skip
    body.append(_table(headers, rows, "checks"))
    body.append("<h2>Engineering gates</h2>")
    body += _gates_html(inp.gates)
    return _page(title, body)


@dataclass(frozen=True)
class BoardRun:
    """One run of a benchmark page: its leaderboard row, AC scores and gates."""

    board: dict[str, Any]
    ac: pd.DataFrame
    gates: pd.DataFrame
    report_html: str | None


def _gate_summary(gates: pd.DataFrame) -> str:
    """Failed gates by name, the others counted by status, as the terminal shows them."""
    failed = gates.loc[gates["status"] == "fail", "gate"].astype(str).tolist()
    counts = gates.loc[gates["status"] != "fail", "status"].astype(str).value_counts()
    parts = [f'<span class="fail">✗ {_e(", ".join(failed))}</span>'] if failed else []
    if "pass" in counts:
        parts.append(f'<span class="pass">✓ {counts.pop("pass")}</span>')
    parts += [f"{n} {_e(status)}" for status, n in sorted(counts.items())]
    return ", ".join(parts) or "—"


def render_board_html(
    title: str, subtitle: str, runs: Sequence[BoardRun], images: dict[str, Path] | None = None
) -> str:
    """One ranking group of a benchmark: the leaderboard with Final CI bars, then the
    AC × run heat map (priorities per row, a failed gate marked per column), then the
    `images` (PNG plots by name), inline as data URIs."""
    body = [f"<h1>{_e(title)}</h1>", f"<p>{_e(subtitle)}</p>", "<h2>Leaderboard</h2>"]
    rows = []
    for run in runs:
        b = run.board
        name = _e(b["run_key"])
        link = f'<a href="{_e(run.report_html)}">{name}</a>' if run.report_html else name
        final = _num(b["final"]) if b["ranked"] else _e(b["not_ranked_reason"])
        rows.append([
            _td("—" if _null(b["rank"]) else str(int(b["rank"])), "num"),
            _td(_e(b["framework"])), _td(link), _td(final, "num"),
            _td(_num(b["adjusted_final"]), "num"),
            _td(ci_bar(b["final"], b["final_ci_low"], b["final_ci_high"])
                + f' {_num(b["final_ci_low"])}–{_num(b["final_ci_high"])}'),
            _td("—" if _null(b["rating"]) else
                f'{float(b["rating"]):.0f} ({float(b["rating_ci_low"]):.0f}–'
                f'{float(b["rating_ci_high"]):.0f})', "num"),
            _td(_num(b["total_cost_usd"]), "num"), _td(_gate_summary(run.gates)),
        ])  # fmt: skip
    headers = ["#", "framework", "run", "Final", "Adjusted", "Final 95 % CI",
               "BT rating (95 % CI)", "cost $", "gates"]  # fmt: skip
    body.append(_table(headers, rows, "leaderboard"))
    body.append(
        '<p class="muted"># orders by Adjusted Final where a gate failed (Final × 0.5), else '
        "Final; the bar is the Monte Carlo 95 % CI of Final (dot: Final).</p>"
    )
    body.append("<h2>Acceptance criteria × run</h2>")
    acs = (
        pd.concat([r.ac[["ac_id", "story_id", "priority"]] for r in runs])
        .drop_duplicates("ac_id")
        .sort_values("ac_id")
    )
    header = ["AC", "priority"]
    for run in runs:
        mark = ' <span class="fail">✗ gate</span>' if (run.gates["status"] == "fail").any() else ""
        header.append(
            f"{_e(run.board['framework'])} {_e(run.board['run_key'].rsplit('.', 1)[-1])}{mark}"
        )
    rows = []
    for ac in acs.itertuples(index=False):
        cells = [_td(f"{_e(ac.ac_id)} <span class=\"muted\">{_e(ac.story_id)}</span>"),
                 _td(_prio(str(ac.priority)))]  # fmt: skip
        for run in runs:
            got = run.ac[run.ac["ac_id"] == ac.ac_id]
            score = got["ac_score"].iloc[0] if len(got) else None
            cells.append(_heat_cell(score, f"{run.board['run_key']} {ac.ac_id}: {_num(score)}"))
        rows.append(cells)
    body.append(_table(header, rows, "heat"))
    body.append(
        '<p class="muted">Cells: AC_score (0.6·I + 0.4·T), grey = not measured. P2 ACs weigh 0 '
        "in Final. ✗ gate: a confirmed failed gate halves that run's Final.</p>"
    )
    if images:
        body.append("<h2>Plots</h2>")
        for name, png in images.items():
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            body.append(f'<p><img alt="{_e(name)}" src="data:image/png;base64,{data}"></p>')
    return _page(title, body)


def render_suite_html(title: str, subtitle: str, rating: pd.DataFrame, prd: pd.DataFrame) -> str:
    """A suite's framework ratings with CI bars and the framework × PRD heat map."""
    body = [f"<h1>{_e(title)}</h1>", f"<p>{_e(subtitle)}</p>", "<h2>Frameworks</h2>"]
    low = float(rating["rating_ci_low"].min()) if len(rating) else 0.0
    high = float(rating["rating_ci_high"].max()) if len(rating) else 1.0
    rows = []
    for r in rating.sort_values("rank").to_dict("records"):
        rows.append([
            _td(str(r["rank"]), "num"), _td(_e(r["framework"])),
            _td(ci_bar(r["rating"], r["rating_ci_low"], r["rating_ci_high"], lo=low, hi=high)
                + f' {float(r["rating"]):.0f} ({float(r["rating_ci_low"]):.0f}–'
                  f'{float(r["rating_ci_high"]):.0f})'),
            _td(ci_bar(r["mean_final"], r["mean_final_ci_low"], r["mean_final_ci_high"])
                + f' {_num(r["mean_final"])} ({_num(r["mean_final_ci_low"])}–'
                  f'{_num(r["mean_final_ci_high"])})'),
            _td(str(r["n_runs"]), "num"), _td(_num(r["cost_per_run_usd"]), "num"),
        ])  # fmt: skip
    headers = ["#", "framework", "BT rating (95 % CI)", "mean Final (95 % CI)", "runs", "$/run"]
    body.append(_table(headers, rows, "leaderboard"))
    body.append("<h2>Framework × PRD (mean Final)</h2>")
    benches = sorted(prd["benchmark"].astype(str).unique())
    rows = []
    for framework in sorted(prd["framework"].astype(str).unique()):
        cells = [_td(_e(framework))]
        for bench in benches:
            got = prd[(prd["framework"] == framework) & (prd["benchmark"] == bench)]
            score = got["mean_final"].iloc[0] if len(got) else None
            cells.append(_heat_cell(score, f"{framework} on {bench}: {_num(score)}"))
        rows.append(cells)
    body.append(_table(["framework", *(_e(b) for b in benches)], rows, "heat"))
    return _page(title, body)
