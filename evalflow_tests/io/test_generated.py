"""Generated files (schemas, docs/tables.md) match the models byte for byte."""

from __future__ import annotations

from pathlib import Path

from evalflow.io.generated import generated_files, stale_files, write_generated


def test_checked_in_files_are_current() -> None:
    assert stale_files() == [], "run `evalflow schemas write`"


def test_write_then_nothing_is_stale(tmp_path: Path) -> None:
    assert stale_files(tmp_path) == sorted(generated_files()) or stale_files(tmp_path)
    write_generated(tmp_path)
    assert stale_files(tmp_path) == []
    assert (tmp_path / "schemas" / "tables" / "final_score.schema.json").is_file()
