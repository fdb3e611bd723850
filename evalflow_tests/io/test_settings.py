"""Settings follow their environment variables and fall back to documented defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.io import settings


def test_warehouse_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(tmp_path))
    assert settings.warehouse().workdir == tmp_path.resolve()
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", "")
    assert settings.warehouse_root() == "data/warehouse"
    monkeypatch.delenv("EVALFLOW_WAREHOUSE")
    assert settings.warehouse().workdir == Path("data/warehouse").resolve()


def test_uri_warehouse_is_kept_verbatim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", "s3://bucket/evalflow")
    assert settings.warehouse().root == "s3://bucket/evalflow"
    assert not settings.warehouse().is_local


def test_judge_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALFLOW_JUDGE", raising=False)
    assert settings.default_judge() == "heuristic"


def test_a_dagster_yaml_evalflow_wrote_is_upgraded_and_one_the_user_wrote_is_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old = f"{settings.WRITTEN_BY} an older evalflow.\ntelemetry:\n  enabled: false\n"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for home, text in ((ours, old), (theirs, "telemetry:\n  enabled: false\n")):
        home.mkdir()
        (home / "dagster.yaml").write_text(text)
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        settings.dagster_home()
    assert (ours / "dagster.yaml").read_text() == settings.DAGSTER_YAML_TEXT
    assert (theirs / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"
