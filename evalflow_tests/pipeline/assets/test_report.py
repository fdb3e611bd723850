"""The report asset: named after the PRD (SPEC §1 Report), rewritten after a renderer change."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

from evalflow.domain.models import PRD, AcceptanceCriterion, Story
from evalflow.pipeline.assets.common import RENDERER_VERSION, data_version
from evalflow.pipeline.assets.report import html_path, write_report
from evalflow.reports import html, markdown
from evalflow.reports.markdown import report_filename


def _prd(title: str, priority: str = "P1") -> PRD:
    ac = AcceptanceCriterion(id="S1-AC1", text="t", line=1)
    return PRD(title=title, stories=(Story(id="S1", title="s", priority=priority, acs=(ac,)),))


def test_the_report_is_named_after_the_prd_not_the_benchmark() -> None:
    """Issue 27 / SPEC §1 Report: `<priority>-<story-slug>-<timestamp>[-<run-id>].md`."""
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    name = report_filename(_prd("PRD: Trialist — free trials & billing"), "tl.bmad.r1", at)
    assert name == "P1-trialist-free-trials-billing-20260102T030405Z-tl.bmad.r1.md"
    long = report_filename(_prd("A very long title " * 6, "P0"), "b.f.r1", at)
    slug = long.removeprefix("P0-").split("-20260102T")[0]
    assert len(slug) <= 48 and slug.startswith("a-very-long-title") and not slug.endswith("-")
    assert report_filename(_prd("!!!"), "b.f.r1", at).startswith("P1-prd-2026")
    assert html_path(Path("r/P1-x.md")) == Path("r/P1-x.html")


def test_the_report_data_version_carries_the_renderers_digest() -> None:
    """Editing either renderer changes the report's data version (and no other table's), which
    `freshness` compares: the next materialize rewrites an unchanged run's report."""
    sources = b"".join(Path(m.__file__).read_bytes() for m in (markdown, html))
    assert hashlib.sha256(sources).hexdigest()[:12] == RENDERER_VERSION
    assert data_version("report", "f" * 64) == f"{'f' * 64}+report.{RENDERER_VERSION}"
    assert data_version("final_score", "f" * 64) == "f" * 64


def test_a_new_report_replaces_the_runs_previous_pair(tmp_path: Path) -> None:
    """Unchanged content keeps the files (and their time-stamped name); new content is
    written under the new name beside its HTML, and the run's previous pair is removed."""
    path, digest = write_report(tmp_path, None, "P0-x-1-b.f.r1.md", "# one\n", "<p>one</p>")
    assert path.read_text() == "# one\n" and html_path(path).read_text() == "<p>one</p>"
    same, again = write_report(tmp_path, path.name, "P0-x-2-b.f.r1.md", "# one\n", "<p>one</p>")
    assert (same, again) == (path, digest)
    new, other = write_report(tmp_path, path.name, "P0-x-3-b.f.r1.md", "# one\n", "<p>two</p>")
    assert other != digest and html_path(new).read_text() == "<p>two</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["P0-x-3-b.f.r1.html", "P0-x-3-b.f.r1.md"]
