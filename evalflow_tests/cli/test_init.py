"""`evalflow init` on a spec-kit repository with P1-P5 stories: a benchmark that passes
`baseline check`, a manifest with commented guesses, and no overwrite of a frozen baseline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from evalflow.errors import InputError
from evalflow.judges.openai_judge import OpenAIJudge
from evalflow.repo import git as git_module
from evalflow_tests.cli.test_baseline_cli import run_cli

FIXTURE = Path(__file__).parents[1] / "importers" / "fixtures" / "spec-kit"


def _repo(make_repo) -> Path:
    spec = {str(p.relative_to(FIXTURE)): p.read_text() for p in FIXTURE.rglob("*") if p.is_file()}
    code = {**spec, "requirements.txt": "", "app/main.py": "x = 1\n", "tests/unit/test_a.py": ""}
    return make_repo(spec, code)


def test_init_writes_a_checkable_benchmark(make_repo, tmp_path: Path, capsys) -> None:
    repo = _repo(make_repo)
    out = tmp_path / "bench"
    code, stdout, err = run_cli(
        capsys, "init", "--from", "spec-kit", str(repo), "--benchmark", "pantry", "--out", str(out)
    )
    assert code == 0, err
    assert "imported 4 stories, 5 ACs, 4 out-of-scope items" in stdout
    assert "ASSUMED priorities (listed in prd.md): US4" in stdout
    code, stdout, err = run_cli(capsys, "baseline", "check", str(out / "_ac-baseline.yaml"))
    assert code == 0, err
    assert "warning: story US4 has no known priority label; scored as ASSUMED P1" in stdout
    manifest_text = (out / "runs" / "speckit-r1.yaml").read_text()
    manifest = yaml.safe_load(manifest_text)
    assert manifest["spec_dir"] == "specs/003-pantry" and manifest["base"] != manifest["head"]
    assert "# guessed: the last commit touching only the spec/framework files" in manifest_text
    assert manifest["gates"]["unit"] == "python -m pytest -q tests/unit"
    code, _, err = run_cli(
        capsys, "init", "--from", "spec-kit", str(repo), "--benchmark", "pantry", "--out", str(out)
    )
    assert code == 2 and "already exists" in err
    run_cli(capsys, "baseline", "freeze", str(out / "_ac-baseline.yaml"))
    code, _, err = run_cli(capsys, "init", "--from", "spec-kit", str(repo), "--benchmark",
                           "pantry", "--out", str(out), "--force")  # fmt: skip
    assert code == 2 and "frozen" in err


def test_init_proposes_the_runs_folder_when_each_framework_has_one(
    make_repo, tmp_path: Path, capsys
) -> None:
    spec = {
        f"speckit/{p.relative_to(FIXTURE)}": p.read_text()
        for p in FIXTURE.rglob("*")
        if p.is_file()
    }
    bmad = {"bmad/docs/prd.md": "# PRD\n", "bmad/package.json": "{}"}
    code = {
        **spec,
        **bmad,
        "speckit/package.json": '{"scripts": {"test": "vitest run"}}',
        "speckit/package-lock.json": "{}",
        "speckit/src/index.ts": "export {};\n",
    }
    repo = make_repo({**spec, **bmad}, code)
    out = tmp_path / "bench"
    code_, stdout, err = run_cli(
        capsys, "init", "--from", "spec-kit", str(repo), "--spec", "speckit/specs/003-pantry",
        "--benchmark", "pantry", "--out", str(out),
    )  # fmt: skip
    assert code_ == 0, err
    assert "root: speckit (one spec folder per framework: speckit/ holds this run's spec" in stdout
    manifest_text = (out / "runs" / "speckit-r1.yaml").read_text()
    manifest = yaml.safe_load(manifest_text)
    assert manifest["root"] == "speckit"
    # Gates run in root:, so they are guessed from its own package.json and lockfile.
    assert manifest["setup"] == "auto" and manifest["gates"]["unit"] == "npm run test"


def test_draft_never_overwrites_a_frozen_baseline(mini: Path, capsys) -> None:
    baseline = mini / "_ac-baseline.yaml"
    run_cli(capsys, "baseline", "freeze", str(baseline))
    code, _, err = run_cli(capsys, "baseline", "draft", str(mini / "prd.md"), "--benchmark", "mini",
                           "--force")  # fmt: skip
    assert code == 2 and "frozen" in err


def test_lint_strict_exit_code_and_labels_template(mini: Path, tmp_path: Path, capsys) -> None:
    baseline = str(mini / "_ac-baseline.yaml")
    code, stdout, _ = run_cli(capsys, "baseline", "lint", baseline)
    assert code == 0 and "[anchors]" in stdout
    code, _, _ = run_cli(capsys, "baseline", "lint", baseline, "--strict")
    assert code == 1
    out = tmp_path / "labels.yaml"
    code, _, err = run_cli(capsys, "labels", "template", baseline, "--out", str(out))
    assert code == 0, err
    from evalflow.judges.labels import load_labels

    labels = load_labels(out)
    assert {v.status for v in labels.verdicts} == {"UNSCORED"} and len(labels.verdicts) >= 2
    # One file for the whole benchmark: a block per run key.
    many = tmp_path / "all.labels.yaml"
    args = ["labels", "template", baseline, "--out", str(many), "--run-key", "mini.good.r1",
            "--run-key", "mini.poor.r1"]  # fmt: skip
    code, stdout, err = run_cli(capsys, *args)
    assert code == 0 and "for 2 runs" in stdout, err
    blocks = load_labels(many).blocks()
    assert sorted(blocks) == ["mini.good.r1", "mini.poor.r1"]
    assert len(blocks["mini.poor.r1"]) == len(labels.verdicts)


def _manifest(path: Path, repo_path: Path, **over: str) -> Path:
    data = {"benchmark": "pantry", "framework": "speckit", "run": "r1", "repo": str(repo_path),
            "base": "base", "head": "head", "spec_dir": "specs/003-pantry", **over}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    return path


def test_register_fails_early_on_bad_manifests(
    make_repo, tmp_path: Path, warehouse_dir: Path, capsys
) -> None:
    repo = _repo(make_repo)
    cases = [
        ({"base": "no-such-ref"}, "unknown commit 'no-such-ref'"),
        ({"head": "base"}, "is the same commit as base"),
        ({"spec_dir": "../elsewhere"}, "is not inside the repository"),
        ({"spec_dir": "/etc"}, "is not inside the repository"),
        ({"repo": str(tmp_path / "missing")}, "repository not found"),
    ]
    for n, (over, message) in enumerate(cases):
        path = _manifest(tmp_path / f"bad{n}.yaml", repo, **over)
        code, _, err = run_cli(capsys, "register", str(path))
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, (over, err)
    first = _manifest(tmp_path / "first.yaml", repo)
    assert run_cli(capsys, "register", str(first))[0] == 0
    assert run_cli(capsys, "register", str(first))[0] == 0  # the same manifest again is fine
    other = _manifest(tmp_path / "other.yaml", repo)
    code, _, err = run_cli(capsys, "register", str(other))
    assert code == 2 and "already registered to" in err and "--replace" in err
    code, out, err = run_cli(capsys, "register", str(other), "--replace")
    assert code == 0 and "registered pantry.speckit.r1" in out, err
    # Another framework's run of the same repository, base and head, without root: one line.
    bmad = _manifest(tmp_path / "bmad.yaml", repo, framework="bmad")
    code, out, err = run_cli(capsys, "register", str(bmad))
    assert code == 0 and "registered pantry.bmad.r1" in out
    assert [line for line in err.splitlines() if "share" in line] == [
        "warning: runs pantry.bmad.r1, pantry.speckit.r1 of different frameworks share "
        f"{repo}, base and head without root: each sees the other's code; give each manifest "
        "root: <its folder>"
    ]


SPEC_MD = """\
# Feature Specification: Pantry

### User Story 1 - Add an item (Priority: P1)

**Acceptance Scenarios**:

1. **Given** an empty pantry, **When** the cook adds milk, **Then** the API returns 201.

### User Story 2 - Expiry reminders (Priority: P4)

**Acceptance Scenarios**:

1. **Given** milk expires tomorrow, **When** the job runs, **Then** a reminder is sent.

### User Story 3 - Supplier sync (Priority: P5)

**Acceptance Scenarios**:

1. **Given** a delivery, **When** it is received, **Then** the stock status becomes `in_stock`.

### User Story 4 - Barcode scan (Priority: P7)

**Acceptance Scenarios**:

1. **Given** a barcode, **When** it is scanned, **Then** the item name is filled in.
"""


def test_baseline_priority_map_key_weighs_the_prd_everywhere(tmp_path: Path, capsys) -> None:
    # A baseline beside a spec-kit spec.md (no import): its priority_map is frozen with the
    # checks and read wherever the benchmark is loaded (check, register, scoring).
    (tmp_path / "spec.md").write_text(SPEC_MD)
    code, stdout, err = run_cli(capsys, "baseline", "draft", str(tmp_path / "spec.md"),
                                "--benchmark", "pantry", "--priority-map", "P4=P1")  # fmt: skip
    assert code == 0, err
    assert "ASSUMED priority P1: story US4" in stdout
    baseline = tmp_path / "_ac-baseline.yaml"
    draft = yaml.safe_load(baseline.read_text())
    assert draft["priority_map"] == {"P4": "P1"}
    # US2 (P4 → P1) now carries weight, so the drafter wrote its checks.
    assert any(ac["id"].startswith("US2-") for ac in draft["acs"])
    code, stdout, err = run_cli(capsys, "baseline", "check", str(baseline), "--json")
    assert code == 0, err
    assert yaml.safe_load(stdout)["assumed_priorities"] == ["US4"]
    from evalflow.io.inputs import load_benchmark

    stories = load_benchmark(baseline).prd.stories
    assert [(s.id, s.priority) for s in stories] == [
        ("US1", "P0"), ("US2", "P1"), ("US3", "P2"), ("US4", "P1"),
    ]  # fmt: skip
    draft["priority_map"] = {"P4": "P9"}
    baseline.write_text(yaml.safe_dump(draft))
    code, _, err = run_cli(capsys, "baseline", "check", str(baseline))
    assert code == 2 and "priority_map" in err and "\n" not in err.strip()


def test_lint_refuses_a_t_check_without_a_level_in_one_line(tmp_path: Path, capsys) -> None:
    prd = "## Story S1: List (P0)\n- A1: The list shows all items.\n"
    (tmp_path / "prd.md").write_text(prd)
    baseline = tmp_path / "_ac-baseline.yaml"
    checks = [
        {"id": "A1-I1", "kind": "I", "proposition": "The list shows all items."},
        {"id": "A1-T1", "kind": "T", "proposition": "A test asserts the list."},
    ]
    ac = {"id": "A1", "text": "The list shows all items.", "checks": checks}
    baseline.write_text(yaml.safe_dump({"benchmark": "b", "prd": "prd.md", "acs": [ac]}))
    code, _, err = run_cli(capsys, "baseline", "lint", str(baseline), "--strict")
    assert code == 2
    assert "T-check A1-T1 needs a level" in err and len(err.strip().splitlines()) == 1


def test_every_claude_command_without_a_key_is_the_same_one_line_exit_2(
    mini: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    # `baseline draft --drafter claude` used to exit 3 with the SDK's TypeError.
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    prd = str(mini / "prd.md")
    out = str(tmp_path / "draft.yaml")
    messages = set()
    for args in (
        ("baseline", "draft", prd, "--benchmark", "b", "--drafter", "claude", "--out", out),
        ("plugin", "score", str(tmp_path), "--judge", "anthropic"),
        ("plugin", "certify", str(tmp_path), "--mc-backend", "anthropic"),
    ):
        code, _, err = run_cli(capsys, *args)
        assert code == 2, (args, err)
        (line,) = err.strip().splitlines()
        where, _, message = line.partition(": ANTHROPIC_API_KEY is not set")
        assert where.startswith("error: --") and message, line
        messages.add(message)
    assert len(messages) == 1  # the same words, only the option named differs
    # The OpenAI-compatible judge says it in the same words, naming its own variable.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InputError) as err:
        OpenAIJudge()
    line = err.value.one_line()
    assert line.startswith("--judge openai: OPENAI_API_KEY is not set — export OPENAI_API_KEY=")
    (claude,) = messages
    offline = ", or work offline without one (--judge heuristic, --drafter offline)"
    assert claude.endswith(offline) and line.endswith(offline)


def test_commands_without_a_warehouse_leave_no_git_workspace_in_tmpdir(
    make_repo, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command that reads a repository without a warehouse removes its git workspace
    (in $TMPDIR) when it ends — having succeeded or failed — not only when the process exits."""
    temp = tmp_path / "temp"
    temp.mkdir()
    repo, out = _repo(make_repo), tmp_path / "bench"
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(git_module, "_WORK_ROOT", [])  # no earlier test's warehouse
    monkeypatch.setattr(git_module, "_STATE", {})
    baseline = str(out / "_ac-baseline.yaml")
    commands = [
        (0, ["init", "--from", "spec-kit", str(repo), "--benchmark", "pantry", "--out", str(out)]),
        (0, ["baseline", "lint", baseline, "--repo", str(repo)]),
        (2, ["baseline", "lint", baseline, "--repo", str(repo), "--head", "no-such-commit"]),
        (0, ["probe", "test", baseline, "US1-AC1-I1", "--repo", str(repo)]),
        (0, ["baseline", "draft", str(out / "prd.md"), "--out", str(tmp_path / "d.yaml"),
             "--benchmark", "pantry", "--repo", str(repo)]),
    ]  # fmt: skip
    for expected, args in commands:
        code, _, err = run_cli(capsys, *args)
        assert code == expected, (args, err)
        assert list(temp.iterdir()) == [], args


def test_a_terminated_command_removes_its_git_workspace(make_repo, tmp_path: Path) -> None:
    """SIGTERM skips atexit: throwaway_workspace turns it into SystemExit, so the workspace
    goes anyway."""
    temp = tmp_path / "temp"
    temp.mkdir()
    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    code = (
        "import sys, time; from pathlib import Path\n"
        "from evalflow.repo.git import resolve_commit, throwaway_workspace\n"
        "with throwaway_workspace():\n"
        "    resolve_commit(Path(sys.argv[1]), 'head'); print('ready', flush=True)\n"
        "    time.sleep(60)\n"
    )
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": os.pathsep.join(sys.path)}
    with subprocess.Popen(
        [sys.executable, "-c", code, str(repo)], env=env, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        assert list(temp.iterdir()) != []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert list(temp.iterdir()) == []


def test_init_on_a_mirror_or_an_unfinished_fetch_says_what_it_got(
    make_repo, tmp_path: Path, capsys
) -> None:
    # A `fetch` mirror is a bare repository; an interrupted fetch leaves a folder without git
    # data. Both said "not a git repository — … or use 'source'", a key init does not have.
    bare = tmp_path / "mirror"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(_repo(make_repo)), str(bare)], check=True, timeout=60
    )
    empty = tmp_path / "unfinished"
    empty.mkdir()
    # A clone of a snapshot whose large files were left out: .git is there, objects are not.
    partial = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", str(bare), str(partial)], check=True, timeout=60)
    subprocess.run(["git", "-C", str(partial), "repack", "-adq"], check=True, timeout=60)
    for pack in (partial / ".git" / "objects" / "pack").glob("*"):
        pack.unlink()
    cases = (
        (bare, "git clone --no-local"),
        (empty, "no git repository here"),
        (partial, "cannot all be read"),
    )
    for path, want in cases:
        code, _, err = run_cli(capsys, "init", "--from", "spec-kit", str(path), "--benchmark",
                               "b", "--out", str(tmp_path / "out"))  # fmt: skip
        assert code == 2 and err.count("\n") <= 1, err
        assert f"init {path}:" in err and want in err and "'source'" not in err
