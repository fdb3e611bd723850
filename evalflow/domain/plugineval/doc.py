"""A report as blocks (headings, paragraphs, tables, lists), rendered as Markdown or HTML.

PluginEval's reports are built once as blocks, so the Markdown and the HTML page say the same
thing. Inline text may use two Markdown marks, `` `code` `` and `**bold**`; the HTML renderer
escapes everything first and only then turns those marks into tags, so text from a hostile
skill can never become markup. The page is self-contained: inline CSS, no script, no external
asset, and a Content-Security-Policy that forbids loading anything.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True, slots=True)
class Para:
    """Lines of one paragraph (Markdown keeps the line breaks; HTML shows them as <br>)."""

    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Table:
    headers: tuple[str, ...]
    # One letter a column: l(eft), r(ight) or c(entre).
    aligns: str
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Items:
    """A bulleted list, under an optional one-line title such as "Layers:"."""

    title: str | None
    items: tuple[str, ...]


Block = Heading | Para | Table | Items

_MD_RULE = {"l": "---", "r": "---:", "c": ":---:"}
_CODE_RE = re.compile(r"`([^`\n]+)`")
_BOLD_RE = re.compile(r"\*\*([^*\n]+)\*\*")


def _md_cell(text: str) -> str:
    # A `|` inside a cell would split it into two columns.
    return text.replace("|", "\\|")


def _md_block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"{'#' * block.level} {block.text}"
    if isinstance(block, Para):
        return "\n".join(block.lines)
    if isinstance(block, Table):
        head = "| " + " | ".join(_md_cell(h) for h in block.headers) + " |"
        rule = "|" + "|".join(_MD_RULE[a] for a in block.aligns) + "|"
        rows = ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
        return "\n".join([head, rule, *rows])
    lines = [block.title] if block.title is not None else []
    return "\n".join(lines + [f"- {item}" for item in block.items])


def to_markdown(blocks: Sequence[Block]) -> str:
    """Blocks separated by one blank line, ending with a newline."""
    return "\n\n".join(_md_block(b) for b in blocks) + "\n"


def inline_html(text: str) -> str:
    """Escaped text with `code` and **bold** turned into tags (after escaping)."""
    out = html.escape(text, quote=True)
    out = _CODE_RE.sub(r"<code>\1</code>", out)
    return _BOLD_RE.sub(r"<strong>\1</strong>", out)


def _html_block(block: Block) -> str:
    if isinstance(block, Heading):
        level = min(max(block.level, 1), 6)
        return f"<h{level}>{inline_html(block.text)}</h{level}>"
    if isinstance(block, Para):
        return "<p>" + "<br>\n".join(inline_html(line) for line in block.lines) + "</p>"
    if isinstance(block, Table):
        align = [f' class="{a}"' if a in "rc" else "" for a in block.aligns]
        head = "".join(
            f"<th{a}>{inline_html(h)}</th>" for a, h in zip(align, block.headers, strict=True)
        )
        body = "\n".join(
            "<tr>"
            + "".join(f"<td{a}>{inline_html(c)}</td>" for a, c in zip(align, row, strict=True))
            + "</tr>"
            for row in block.rows
        )
        return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"
    title = f"<p>{inline_html(block.title)}</p>\n" if block.title is not None else ""
    items = "\n".join(f"<li>{inline_html(item)}</li>" for item in block.items)
    return f"{title}<ul>\n{items}\n</ul>"


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #1f2328; line-height: 1.45; }
main { max-width: 72rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f6f8fa; }
.r { text-align: right; font-variant-numeric: tabular-nums; }
.c { text-align: center; }
code { font-family: ui-monospace, monospace; background: #f6f8fa; padding: 0 0.2rem; }
"""


def to_html(title: str, blocks: Sequence[Block]) -> str:
    """A complete, self-contained HTML page."""
    body = "\n".join(_html_block(b) for b in blocks)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title, quote=True)}</title>\n"
        f"<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )
