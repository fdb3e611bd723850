"""The report asset: named after the PRD (SPEC §1 Report), rewritten after a renderer change."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from evalflow.domain.models import PRD, AcceptanceCriterion, Story
from evalflow.pipeline.assets.common import CODE_VERSION
from evalflow.pipeline.assets.report import RENDERER_VERSION, html_path, report
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


def test_a_renderer_change_makes_the_report_stale() -> None:
    """Issue 27: an unchanged re-evaluation kept the old report after the renderer changed.
    The report's code version carries the renderers' source digest, and freshness compares
    code versions (`freshness._fresh`), so editing either renderer re-runs the report."""
    sources = b"".join(Path(m.__file__).read_bytes() for m in (markdown, html))
    assert hashlib.sha256(sources).hexdigest()[:12] == RENDERER_VERSION
    version = report.code_versions_by_key[dg.AssetKey("report")]
    assert version == f"{CODE_VERSION}+report.{RENDERER_VERSION}"
