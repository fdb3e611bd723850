"""The light CLI: commands that never import Dagster, a help listing that imports no command,
a Dagster home that keeps Dagster quiet, tables that never elide their headers."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from rich.console import Console

from evalflow.cli import COMMANDS, SUMMARIES, cli
from evalflow.cli.output import emit_table
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow_tests.conftest import DEMO

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "data" / "demo" / "skills" / "speckit" / "spec-writer"
# Runs the CLI, then reports on its last stderr line which of the heavy libraries it loaded.
HEAVY = ("dagster", "pandas", "pyarrow")
PROBE = f"""
import sys
from evalflow.cli import main
try:
    main(sys.argv[1:])
finally:
    loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
    print("LOADED=" + ",".join(loaded), file=sys.stderr)
"""
COLUMNS = ["benchmark", "framework", "run", "final", "final_ci_low", "final_ci_high"]
COLUMNS += ["adjusted_final", "band", "bt_rating", "bt_ci_low", "bt_ci_high", "cost_usd"]
ROW = ["trialist", "speckit", "r1", 0.625, 0.5, 0.7, 0.6, "good", 1500.0, 1400.0, 1600.0, 1.25]


def run_light(*args: str, env: dict[str, str]) -> tuple[int, str, set[str]]:
    """(exit code, stderr without the probe's line, the heavy libraries loaded)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=ROOT,
        timeout=120,
    )
    *err, last = done.stderr.rstrip("\n").splitlines() or [""]
    assert last.startswith("LOADED="), done.stderr
    return (
        done.returncode,
        "\n".join(err),
        set(filter(None, last.removeprefix("LOADED=").split(","))),
    )


QUERY = ("query", "SELECT 1 AS one", "--json")
BASELINE_CHECK = ("baseline", "check", str(DEMO / "_ac-baseline.yaml"))
LIGHT = [
    (("--help",), 0),
    (("--version",), 0),
    (QUERY, 0),
    (("leaderboard",), 2),  # empty warehouse: "no ranked runs yet"
    (BASELINE_CHECK, 0),
    (("plugin", "score", str(PLUGIN), "--depth", "quick", "--output", "json"), 0),
]


def _light_env(tmp_path: Path) -> dict[str, str]:
    return {"EVALFLOW_WAREHOUSE": str(tmp_path / "warehouse"), "DAGSTER_HOME": ""}


@pytest.mark.parametrize(("args", "code"), LIGHT)
def test_light_commands_never_import_dagster(args: tuple[str, ...], code: int, tmp_path) -> None:
    rc, err, loaded = run_light(*args, env=_light_env(tmp_path))
    assert rc == code, err
    assert "dagster" not in loaded


# pandas costs more than half of `evalflow query`'s 1 s budget (docs/performance.md): no light
# command may load a data library it does not use.
@pytest.mark.parametrize(
    ("args", "forbidden"),
    [
        (("--help",), {"dagster", "pandas", "pyarrow"}),
        (("--version",), {"dagster", "pandas", "pyarrow"}),
        (QUERY, {"dagster", "pandas"}),
        (BASELINE_CHECK, {"dagster", "pandas", "pyarrow"}),
    ],
)
def test_light_commands_import_no_data_library_they_do_not_use(
    args: tuple[str, ...], forbidden: set[str], tmp_path: Path
) -> None:
    rc, err, loaded = run_light(*args, env=_light_env(tmp_path))
    assert rc == 0, err
    assert not loaded & forbidden, f"loaded {sorted(loaded & forbidden)}"


def test_help_lists_every_command_by_its_own_summary() -> None:
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        listed = click.Command(name, help=SUMMARIES.get(name, command.help))
        for limit in (45, 70, 200):
            assert listed.get_short_help_str(limit) == command.get_short_help_str(limit), name


def test_evalflow_dagster_home_gets_a_quiet_dagster_yaml(warehouse_dir: Path) -> None:
    home = settings.dagster_home()
    assert home == warehouse_dir.resolve() / "dagster_home"
    assert (home / "dagster.yaml").read_text() == settings.DAGSTER_YAML_TEXT
    from evalflow.pipeline import orchestrate

    assert orchestrate.instance(str(warehouse_dir)).get_settings("telemetry") == {"enabled": False}


def test_a_user_dagster_home_keeps_its_own_dagster_yaml(monkeypatch, tmp_path: Path) -> None:
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: true\n")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    assert settings.dagster_home() == tmp_path
    assert (tmp_path / "dagster.yaml").read_text() == "telemetry:\n  enabled: true\n"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(fresh))
    assert (settings.dagster_home() / "dagster.yaml").read_text() == settings.DAGSTER_YAML_TEXT


@pytest.mark.parametrize("value", ["missing", "relative/home"])
def test_a_bad_dagster_home_is_input_error(value: str, monkeypatch, tmp_path: Path) -> None:
    home = str(tmp_path / value) if value == "missing" else value
    monkeypatch.setenv("DAGSTER_HOME", home)
    with pytest.raises(InputError) as error:
        settings.dagster_home()
    assert error.value.where == f"DAGSTER_HOME={home}" and "mkdir -p" in (error.value.fix or "")


def test_a_file_as_warehouse_is_input_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="not a directory"):
        settings.warehouse(str(tmp_path / "file"))


def test_off_a_terminal_a_wide_table_keeps_every_header(capsys) -> None:
    emit_table(COLUMNS, [ROW], title="leaderboard")
    out = capsys.readouterr().out
    assert "…" not in out
    header = next(line for line in out.splitlines() if "benchmark" in line)
    assert all(f" {column} " in header for column in COLUMNS)


def test_on_a_narrow_terminal_a_table_wraps_within_the_width() -> None:
    file = io.StringIO()
    emit_table(
        COLUMNS, [ROW], console=Console(file=file, force_terminal=True, color_system=None, width=60)
    )
    out = file.getvalue()
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 60
