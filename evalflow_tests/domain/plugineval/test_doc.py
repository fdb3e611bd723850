"""Report blocks rendered as Markdown and as a self-contained, escaped HTML page."""

from __future__ import annotations

from html.parser import HTMLParser

from evalflow.domain.plugineval.doc import (
    Heading,
    Items,
    Para,
    Table,
    inline_html,
    to_html,
    to_markdown,
)

BLOCKS = [
    Heading(2, "skill — 70.00/100"),
    Para(("`path/to/skill` · depth quick", "Badge basis: composite only")),
    Table(("dimension", "score", "grade"), "lrc", (("triggering_accuracy", "0.650", "D"),)),
    Items("Layers:", ("**static** (1 ms): none",)),
]


class _Collect(HTMLParser):
    """Tags seen, and the cell texts of every table row."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_markdown_blocks_are_separated_by_one_blank_line() -> None:
    assert to_markdown(BLOCKS) == (
        "## skill — 70.00/100\n\n"
        "`path/to/skill` · depth quick\nBadge basis: composite only\n\n"
        "| dimension | score | grade |\n|---|---:|:---:|\n| triggering_accuracy | 0.650 | D |\n\n"
        "Layers:\n- **static** (1 ms): none\n"
    )


def test_a_pipe_in_a_cell_does_not_split_the_markdown_column() -> None:
    md = to_markdown([Table(("skill",), "l", (("a|b",),))])
    assert "| a\\|b |" in md


def test_html_page_renders_the_same_table() -> None:
    page = to_html("PluginEval — skill", BLOCKS)
    parsed = _Collect()
    parsed.feed(page)
    assert parsed.rows == [["dimension", "score", "grade"], ["triggering_accuracy", "0.650", "D"]]
    assert {"h2", "p", "table", "ul", "li", "code", "strong"} <= set(parsed.tags)


def test_hostile_text_is_escaped_never_markup() -> None:
    evil = '<script>alert(1)</script> <img src=x onerror="a()"> `<b>` **<i>**'
    page = to_html(evil, [Heading(2, evil), Para((evil,)), Table(("x",), "l", ((evil,),))])
    parsed = _Collect()
    parsed.feed(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert "b" not in parsed.tags and "i" not in parsed.tags
    assert "<script>" not in page
    assert inline_html("`<b>`") == "<code>&lt;b&gt;</code>"
    assert inline_html("**a&b**") == "<strong>a&amp;b</strong>"


def test_the_page_is_self_contained() -> None:
    page = to_html("t", BLOCKS)
    parsed = _Collect()
    parsed.feed(page)
    # Nothing to load: no script, link, image or frame, no src/href, and a CSP forbidding it.
    assert not {"script", "link", "img", "iframe", "object"} & set(parsed.tags)
    assert not [name for name, _ in parsed.attrs if name in ("src", "href")]
    assert "default-src 'none'" in page
    assert "http://" not in page and "https://" not in page
