"""The run commands end to end on the mini benchmark (register, materialize, query, score)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from evalflow.cli import main
from evalflow.io.ledger import read_entries


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


# `make test` keeps one run through the whole pipeline: the pinned demo run (conftest's
# scored_demo_run); this one materialises two more.
@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_register_materialize_query(mini: Path, warehouse_dir: Path, capsys) -> None:
    manifests = sorted(str(p) for p in (mini / "runs").glob("*.yaml"))
    code, out, _ = run_cli(capsys, "register", *manifests, "--json")
    assert code == 0
    assert [r["run_key"] for r in json.loads(out)] == ["mini.good.r1", "mini.partial.r1"]
    code, out, err = run_cli(capsys, "materialize", "--workers", "1", "--json")
    assert code == 0, err
    assert [o["partition"] for o in json.loads(out)] == [
        "mini.good.r1",
        "mini.partial.r1",
        "rank_runs",
    ]
    code, out, _ = run_cli(
        capsys, "query", "SELECT framework, final FROM leaderboard ORDER BY 1", "--json"
    )
    assert json.loads(out) == [
        {"framework": "good", "final": 1.0},
        {"framework": "partial", "final": 0.36},
    ]
    code, out, _ = run_cli(capsys, "query", "SELECT framework FROM leaderboard ORDER BY 1", "--csv")
    assert out == "framework\ngood\npartial\n"
    code, out, _ = run_cli(capsys, "leaderboard")
    assert code == 0 and "good" in out and "partial" in out


def test_register_warns_when_the_author_model_is_unknown(
    mini: Path, warehouse_dir: Path, capsys
) -> None:
    """SPEC §5: without author_model rule 4 cannot be verified; register says so and goes on."""
    good = mini / "runs" / "good.yaml"
    code, _, err = run_cli(capsys, "register", str(good))
    assert code == 0
    assert f"warning: {good}: no author_model — author unknown: rule 4 not verifiable" in err
    data = yaml.safe_load(good.read_text())
    good.write_text(yaml.safe_dump({**data, "author_model": "claude-opus-4-6"}))
    code, _, err = run_cli(capsys, "register", str(good))
    assert code == 0 and "author_model" not in err


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_one_bad_run_never_sinks_the_others(mini: Path, warehouse_dir: Path, capsys) -> None:
    bad = yaml.safe_load((mini / "runs" / "good.yaml").read_text())
    bad.update({"framework": "ghost", "source": None, "repo": str(mini / "no-such-repo")})
    (mini / "runs" / "ghost.yaml").write_text(yaml.safe_dump(bad))
    manifests = sorted(str(p) for p in (mini / "runs").glob("*.yaml"))
    # `evalflow register` refuses the ghost up front; a repository that disappears after
    # registration is what a run must survive, so register through the library.
    from evalflow.pipeline import orchestrate

    orchestrate.register(str(warehouse_dir), [Path(m) for m in manifests])
    code, out, err = run_cli(capsys, "materialize", "--workers", "2")
    assert code == 2
    assert "✗ mini.ghost.r1" in err and "repository not found" in err
    assert "✓ mini.good.r1" in err and "✓ mini.partial.r1" in err
    assert err.strip().splitlines()[-1].startswith("error: 1 of 4 run(s) failed")
    _, out, _ = run_cli(capsys, "query", "SELECT count(*) AS n FROM final_score", "--json")
    assert json.loads(out) == [{"n": 2}]


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_a_lone_failed_run_leaves_the_ranking_empty_not_failed(
    mini: Path, warehouse_dir: Path, capsys
) -> None:
    ghost = yaml.safe_load((mini / "runs" / "good.yaml").read_text())
    ghost.update({"framework": "ghost", "source": None, "repo": str(mini / "no-such-repo")})
    path = mini / "runs" / "ghost.yaml"
    path.write_text(yaml.safe_dump(ghost))
    from evalflow.pipeline import orchestrate

    orchestrate.register(str(warehouse_dir), [path])
    code, _, err = run_cli(capsys, "materialize", "--workers", "1")
    assert code == 2
    assert "✗ mini.ghost.r1" in err and "✓ rank_runs" in err, err
    assert "has no data" not in err
    assert err.strip().splitlines()[-1].startswith("error: 1 of 2 run(s) failed")


def test_unknown_partition_is_one_line(mini: Path, warehouse_dir: Path, capsys) -> None:
    run_cli(capsys, "register", str(mini / "runs" / "good.yaml"))
    code, _, err = run_cli(capsys, "materialize", "--partition", "mini.nope.r1")
    assert code == 2
    assert err.startswith("error: unknown partition key 'mini.nope.r1'")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_score_prints_rollup_and_writes_report(mini: Path, warehouse_dir: Path, capsys) -> None:
    code, out, _ = run_cli(capsys, "score", str(mini / "runs" / "partial.yaml"), "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert row["final"] == 0.36 and row["band"] == "very poor"
    report = Path(row["report_path"])
    assert report.parent == warehouse_dir / "reports" / "mini"
    assert report.name.startswith("P0-mini-2") and report.name.endswith(
        "-mini.partial.r1.heuristic.md"
    )
    text = report.read_text()
    assert "**Final 0.36**" in text and "Σw = 3 + 2 = 5" in text
    (entry,) = read_entries(warehouse_dir / "ledger" / "ledger.jsonl")
    assert entry.description == "framework_run:mini.partial.r1" and entry.status == "pass"
    assert [(r.name, r.passed, r.errors) for r in entry.results] == [
        ("S1-AC1", False, ["not MET: S1-AC1-T1"]),
        ("S2-AC1", False, ["not MET: S2-AC1-I1, S2-AC1-T1"]),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "missing.yaml"], "run manifest not found"),
        (["query", "SELEC nonsense"], "query failed"),
    ],
)
def test_bad_input_is_one_line(args, message, warehouse_dir: Path, capsys) -> None:
    code, _, err = run_cli(capsys, *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_invalid_manifest_names_the_field(tmp_path: Path, warehouse_dir: Path, capsys) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("benchmark: b\nframework: 'bad key!'\nrun: r\nrepo: x\nbase: a\nhead: b\n")
    code, _, err = run_cli(capsys, "register", str(path))
    assert code == 2 and "framework" in err and str(path) in err


@pytest.mark.slow  # ~2 min: every step starts a fresh interpreter importing Dagster
def test_concurrent_partitions_with_the_multiprocess_executor(
    mini: Path, warehouse_dir: Path, capsys
) -> None:
    """Two partitions at once, each on Dagster's multiprocess executor: no lost or mixed rows."""
    manifests = sorted(str(p) for p in (mini / "runs").glob("*.yaml"))
    run_cli(capsys, "register", *manifests)
    code, _, err = run_cli(capsys, "materialize", "--workers", "2", "--executor", "multiprocess")
    assert code == 0, err
    sql = (
        "SELECT run_key, count(*) AS n, min(fingerprint) = max(fingerprint) AS one "
        "FROM majority_vote GROUP BY run_key ORDER BY run_key"
    )
    _, out, _ = run_cli(capsys, "query", sql, "--json")
    assert json.loads(out) == [
        {"run_key": "mini.good.r1", "n": 4, "one": True},
        {"run_key": "mini.partial.r1", "n": 4, "one": True},
    ]
    _, out, _ = run_cli(
        capsys, "query", "SELECT run_key, final FROM final_score ORDER BY 1", "--json"
    )
    assert json.loads(out) == [
        {"run_key": "mini.good.r1", "final": 1.0},
        {"run_key": "mini.partial.r1", "final": 0.36},
    ]


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_uri_warehouse_keeps_local_artifacts_in_the_workdir(
    mini: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Tables go through pyarrow.fs (here file://, as s3:// would); repos, caches, reports and
    the DuckDB catalog stay in $EVALFLOW_WORKDIR."""
    tables, work = tmp_path / "store", tmp_path / "work"
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", f"file://{tables}")
    monkeypatch.setenv("EVALFLOW_WORKDIR", str(work))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    code, out, err = run_cli(capsys, "score", str(mini / "runs" / "good.yaml"), "--json")
    assert code == 0, err
    assert json.loads(out)[0]["final"] == 1.0
    assert (tables / "final_score" / "run_key=mini.good.r1" / "heuristic.parquet").is_file()
    assert (work / "repos" / "mini.good.r1" / ".git").is_dir()
    assert (work / "evalflow.duckdb").is_file() and not (tables / "evalflow.duckdb").exists()
    assert list((work / "reports").rglob("*.md"))
    monkeypatch.delenv("EVALFLOW_WORKDIR")
    code, _, err = run_cli(capsys, "score", str(mini / "runs" / "good.yaml"))
    assert code == 2 and "set EVALFLOW_WORKDIR" in err


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_two_baselines_in_one_benchmark_are_named_exit_2(
    mini: Path, warehouse_dir: Path, capsys
) -> None:
    """Two runs of a benchmark judged against different baseline files: one line naming both
    hashes and the run using the other (was "a bug in evalflow", exit 3)."""
    other = (mini / "_ac-baseline.yaml").read_text().replace("bye() exists", "bye() is defined")
    (mini / "other-baseline.yaml").write_text(other)
    partial = yaml.safe_load((mini / "runs" / "partial.yaml").read_text())
    (mini / "runs" / "partial.yaml").write_text(
        yaml.safe_dump({**partial, "baseline": "../other-baseline.yaml"})
    )
    manifests = sorted(str(p) for p in (mini / "runs").glob("*.yaml"))
    assert run_cli(capsys, "register", *manifests)[0] == 0
    code, _, err = run_cli(capsys, "materialize", "--workers", "1")
    last = err.strip().splitlines()[-1]
    assert code == 2, err
    assert "mixes baseline hashes" in last and "mini.good.r1 uses" in last, last
    assert "bug in evalflow" not in err


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_a_re_frozen_baseline_re_scores_every_run_without_a_mix(
    mini: Path, warehouse_dir: Path, capsys
) -> None:
    manifests = sorted(str(p) for p in (mini / "runs").glob("*.yaml"))
    assert run_cli(capsys, "register", *manifests)[0] == 0
    assert run_cli(capsys, "materialize", "--workers", "1")[0] == 0
    baseline = mini / "_ac-baseline.yaml"
    baseline.write_text(baseline.read_text().replace("bye() exists", "bye() is defined"))
    code, _, err = run_cli(capsys, "materialize", "--workers", "1")
    assert code == 0, err
    _, out, _ = run_cli(
        capsys, "query", "SELECT count(DISTINCT baseline_sha256) AS n FROM run_manifest", "--json"
    )
    assert json.loads(out) == [{"n": 1}]


def _board_row(**values) -> dict:
    base = {"benchmark": "b", "comparability_key": "k", "rank": 1, "rating": 1500.0,
            "rating_ci_low": 1400.0, "rating_ci_high": 1600.0,
            "within_noise_of_next": False}  # fmt: skip
    return {**base, **values}


def test_a_complete_separation_ci_is_one_sided_never_zero_width() -> None:
    """Issue 24 item 6: two runs with complete separation showed "2689 (2689–2689)"."""
    from evalflow.cli.runs import _rating_cell

    rows = [
        _board_row(rating=2689.0, rating_ci_low=2689.0, rating_ci_high=2689.0),
        _board_row(rank=2, rating=311.0, rating_ci_low=311.0, rating_ci_high=311.0),
    ]
    columns = list(rows[0])
    values = [tuple(r.values()) for r in rows]
    assert _rating_cell(rows[0], values, columns) == "2689 (≥ 2689, unbounded: complete separation)"
    assert _rating_cell(rows[1], values, columns) == "311 (≤ 311, unbounded: complete separation)"
    assert _rating_cell(_board_row(), values, columns) == "1500 (1400–1600)"


def test_clear_only_when_the_ratings_are_apart_too() -> None:
    """Issue 24 item 6: "gap to next: clear" at separability 0.0."""
    from evalflow.cli.runs import _gap_cell

    rows = [_board_row(), _board_row(rank=2, rating=1450.0, rating_ci_low=1350.0,
                                     rating_ci_high=1550.0)]  # fmt: skip
    columns = list(rows[0])
    values = [tuple(r.values()) for r in rows]
    assert _gap_cell(rows[0], values, columns) == "not separated (rating CIs overlap)"
    apart = [rows[0], {**rows[1], "rating_ci_high": 1390.0}]
    assert _gap_cell(rows[0], [tuple(r.values()) for r in apart], columns) == "clear"
    assert _gap_cell({**rows[0], "within_noise_of_next": True}, values, columns) == "within noise"


def test_gates_are_a_short_pass_fail_summary() -> None:
    """Issue 27: the gates column held every gate's full error (lines of 260–800 characters)."""
    from evalflow.cli.runs import _gates_short

    assert _gates_short("build=pass,e2e=pass,lint=pass,unit=fail") == "✗ unit, ✓ 3"
    assert _gates_short("build=not-run,e2e=unscored,unit=pass") == "✓ 1, 1 not-run, 1 unscored"
    assert _gates_short(None) == "—"


def test_the_leaderboard_fits_100_columns_unless_wide(
    scored_demo_run: Path, monkeypatch, capsys
) -> None:
    """Issue 27: a 120-column terminal folded every row; off a terminal lines ran 260–800
    characters. The default view fits 100 columns off a terminal too; --wide and --json keep
    every column, the full gate output included."""
    monkeypatch.setenv("COLUMNS", "100")
    wh = ["--warehouse", str(scored_demo_run)]
    code, out, err = run_cli(capsys, "leaderboard", *wh)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 100, out
    row = next(line for line in out.splitlines() if line.startswith("1 "))
    assert row.split()[:5] == ["1", "bmad", "r1", "0.94", "0.47"] and "✗ unit" in row, row
    assert "Reports (Markdown and HTML) under" in out and "--wide" in out
    code, wide, _ = run_cli(capsys, "leaderboard", "--wide", *wh)
    assert code == 0 and "unit fail" in wide and "fully meets spec" in wide
    code, out, _ = run_cli(capsys, "leaderboard", "--json", *wh)
    (record,) = json.loads(out)
    assert "unit fail" in record["gates"] and "unit=fail" in record["gate_status"]
    assert record["report_path"] and record["comparability_key"]


def test_leaderboard_plots_lists_files_that_open_from_here(
    scored_demo_run: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """--plots prints each PNG and SVG as a path that opens from the working directory, also
    after the warehouse moved (the table records where the plots were first written)."""
    moved = tmp_path / "moved"
    shutil.copytree(scored_demo_run, moved)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "leaderboard", "--plots", "--warehouse", "moved")
    assert code == 0, err
    files = [word for word in out.split() if word.endswith((".png", ".svg"))]
    assert len(files) >= 4 and all(f.startswith("moved/plots/trialist/") for f in files), out
    assert all(Path(f).is_file() for f in files)
    (next(moved.rglob("*.svg"))).unlink()
    code, out, _ = run_cli(capsys, "leaderboard", "--plots", "--warehouse", "moved")
    assert code == 0 and "1 plot file(s) are missing" in out
    code, out, _ = run_cli(capsys, "leaderboard", "--plots", "--json", "--warehouse", "moved")
    document = json.loads(out)  # one JSON document, not JSON followed by a table
    assert code == 0 and document["runs"] and document["runs"][0]["comparability_key"]
    assert {p["plot"] for p in document["plots"]} and all(
        p["png"].startswith("moved/plots/trialist/") for p in document["plots"]
    )


def test_the_rejudge_notice_counts_only_the_judge_that_re_judges(
    mini: Path, tmp_path: Path, capsys
) -> None:
    """A run holding an anthropic and a heuristic result: the notice before `--rejudge
    unscored --judge anthropic` counts anthropic's UNSCORED checks and names the judge; with
    the manifest's judge (the default, heuristic) nothing is asked again."""
    from evalflow.cli.runs import _choice, _rejudge_notice
    from evalflow.io.registry import register_manifest
    from evalflow.storage.warehouse import Warehouse
    from evalflow_tests.suite_tables import contract_frame

    root = tmp_path / "wh"
    wh = Warehouse(str(root))
    key = register_manifest(wh, mini / "runs" / "good.yaml")
    for judge, judge_id, costs in (
        ("anthropic", "anthropic:m", [0.25, 0.5, None]),
        ("heuristic", "heuristic", [0.0] * 4),
    ):
        verdicts = [
            {"run_key": key, "judge_name": judge, "judge_id": judge_id, "check_id": f"C{i}",
             "run": 1, "status": "MET" if cost is None else "UNSCORED", "rationale": "refused",
             "evidence": [], "searches": [], "flags": [], "usage": [], "cost_usd": cost or 0.0}
            for i, cost in enumerate(costs)
        ]  # fmt: skip
        wh.write("scoring_run_1", contract_frame("scoring_run_1", verdicts), key, judge)

    _rejudge_notice(str(root), [key], _choice("anthropic", None, None, "unscored"))
    err = capsys.readouterr().err
    assert "judge anthropic: 2 check conversation(s)" in err and "$0.7500" in err
    _rejudge_notice(str(root), [key], _choice(None, None, None, "unscored"))
    err = capsys.readouterr().err
    assert "judge heuristic: 0 check conversation(s)" in err and "$0.0000" in err
