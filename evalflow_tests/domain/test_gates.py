"""The gate result model and the rules deciding a gate (pure; no process is run here)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from pydantic import ValidationError

from evalflow.domain.gates import (
    GATE_RESULT_COLUMNS,
    NO_COMMAND_REASON,
    NPM_CI,
    GateResult,
    ProbeAttempt,
    auto_setup,
    base_incomparable,
    classify_failure,
    command_tools,
    confirmed_failure,
    declared_dependencies,
    dev_groups,
    failed_by_run,
    gates_frame,
    judge_against_base,
    lockfiles,
    mention_pattern,
    mentioned_paths,
    not_comparable,
    unscored_result,
)
from evalflow.domain.models import GateSettings

PROBE = ProbeAttempt(command="docker compose up", output="docker: not found", exit_code=127)


def _fail(exit_code: int = 1, *, timed_out: bool = False) -> GateResult:
    return GateResult(
        gate="unit",
        command="pytest",
        status="fail",
        category="failed",
        evidence="1 failed",
        exit_code=exit_code,
        timed_out=timed_out,
    )


def _not_run(**changes: object) -> GateResult:
    fields: dict[str, object] = {
        "gate": "e2e",
        "command": "docker compose up",
        "status": "not-run",
        "category": "infra",
        "evidence": "exit 127",
        "reason": "no docker",
        "probe": PROBE,
    }
    return GateResult.model_validate({**fields, **changes})


# --- the model refuses results that were not earned ---------------------------------------


def test_not_run_needs_probe_reason_category_and_evidence() -> None:
    assert not _not_run().confirmed
    with pytest.raises(ValidationError, match="attempt"):
        _not_run(probe=None)
    with pytest.raises(ValidationError, match="reason"):
        _not_run(reason="  ")
    with pytest.raises(ValidationError, match="infra or setup"):
        _not_run(category="failed")
    with pytest.raises(ValidationError, match="infra or setup"):
        _not_run(evidence=None)
    with pytest.raises(ValidationError, match="no exit code"):
        _not_run(exit_code=127)


@pytest.mark.parametrize(
    ("status", "exit_code", "timed_out", "category"),
    [
        ("pass", 1, False, None),
        ("pass", 0, True, None),
        ("pass", 0, False, "failed"),
        ("fail", 0, False, "failed"),
        ("fail", 1, False, None),
        ("fail", 1, False, "infra"),
        ("pass", None, False, None),
    ],
)
def test_status_must_match_the_run(
    status: str, exit_code: int | None, timed_out: bool, category: str | None
) -> None:
    with pytest.raises(ValidationError):
        GateResult(
            gate="lint",
            command="ruff",
            status=status,
            exit_code=exit_code,
            timed_out=timed_out,
            category=category,
        )


def test_a_run_gate_carries_no_probe() -> None:
    with pytest.raises(ValidationError, match="only a not-run"):
        GateResult(gate="unit", command="pytest", status="pass", exit_code=0, probe=PROBE)


def test_pre_existing_needs_the_failing_base_run_and_never_for_setup() -> None:
    with pytest.raises(ValidationError, match="base commit"):
        GateResult.model_validate({**_fail().model_dump(), "status": "pre-existing"})
    with pytest.raises(ValidationError, match="never judged against base"):
        GateResult.model_validate(
            {
                **_fail().model_dump(),
                "gate": "setup",
                "status": "pre-existing",
                "base_exit_code": 1,
                "base_timed_out": False,
            }
        )


def test_no_command_is_unscored_without_a_synthetic_probe() -> None:
    result = unscored_result("lint")
    assert result.status == "unscored"
    assert result.category == "unconfigured"
    assert result.reason == NO_COMMAND_REASON
    assert result.probe is None
    assert not result.confirmed
    with pytest.raises(ValidationError, match="unscored"):
        GateResult(gate="lint", command="ruff", status="unscored", category="unconfigured")


def test_only_a_failing_gate_is_confirmed_never_the_setup() -> None:
    setup_failed = GateResult.model_validate({**_fail().model_dump(), "gate": "setup"})
    passed = GateResult(gate="build", command="make", status="pass", exit_code=0)
    assert not confirmed_failure([unscored_result("e2e"), passed, _not_run(), setup_failed])
    assert confirmed_failure([passed, _fail()])
    assert not confirmed_failure([])


# --- classification of a failed execution -------------------------------------------------


def _classify(
    lines: list[str],
    *,
    exit_code: int = 1,
    timed_out: bool = False,
    limit_hit: str | None = None,
    declared: tuple[str, ...] = (),
    tools: tuple[str, ...] = (),
) -> tuple[str, str]:
    return classify_failure(
        exit_code=exit_code,
        timed_out=timed_out,
        limit_hit=limit_hit,
        lines=lines,
        declared=declared,
        tools=tools,
    )


@pytest.mark.parametrize(
    ("lines", "exit_code", "needle"),
    [
        (["sh: 1: tsc: not found"], 127, "tsc: not found"),
        (["bash: eslint: command not found"], 127, "eslint"),
        ([], 127, "no error output"),
        (["sh: ./run.sh: Permission denied"], 126, "Permission denied"),
        (["> x@1.0.0 build", "> tsc", "sh: 1: tsc: not found"], 1, "tsc: not found"),
    ],
)
def test_command_not_found_is_infra(lines: list[str], exit_code: int, needle: str) -> None:
    category, evidence = _classify(lines, exit_code=exit_code)
    assert category == "infra"
    assert needle in evidence


@pytest.mark.parametrize(
    "line",
    [
        "npm error code EAI_AGAIN",
        "npm ERR! request to https://registry.npmjs.org/vite failed, reason: getaddrinfo ENOTFOUND",
        "npm error code ENOTCACHED",
        "WARNING: Retrying ... NewConnectionError: Failed to establish a new connection "
        "(host='pypi.org')",
        "error: Temporary failure in name resolution",
        "npm ERR! connect ECONNREFUSED 127.0.0.1:4873 (registry http://127.0.0.1:4873)",
    ],
)
def test_network_failures_are_infra(line: str) -> None:
    category, evidence = _classify(["Running setup", line])
    assert category == "infra"
    assert evidence.startswith("network unavailable")
    assert line.strip()[:40] in evidence


def test_a_refused_connection_to_the_projects_own_server_is_its_failure() -> None:
    category, _ = _classify(["FAILED tests/e2e/test_api.py - ECONNREFUSED 127.0.0.1:3000"])
    assert category == "failed"


@pytest.mark.parametrize(
    ("line", "limit_hit", "needle"),
    [
        ("RangeError: WebAssembly.instantiate(): Out of memory", None, "out of memory"),
        ("FATAL ERROR: Reached heap limit - JavaScript heap out of memory", None, "memory"),
        ("OSError: [Errno 28] No space left on device", None, "disk full"),
        ("Killed", "memory", "memory limit"),
        ("", "processes", "processes limit"),
        ("", "disk", "disk limit"),
    ],
)
def test_resource_exhaustion_is_infra(line: str, limit_hit: str | None, needle: str) -> None:
    category, evidence = _classify([line], exit_code=-9, limit_hit=limit_hit)
    assert category == "infra"
    assert needle in evidence


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: Package 'docvet' requires a different Python: 3.11.7 not in '>=3.12'",
        "error: The Python request from `.python-version` resolved to Python 3.11.7, which is "
        "incompatible with the project's Python requirement: `>=3.12`",
        "error: No interpreter found for Python >=3.13 in managed installations or search path",
        "  ╰─▶ Because the current Python version (3.11.7) does not satisfy Python>=3.12 and "
        "app==0.1.0 depends on Python>=3.12, we can conclude that app==0.1.0 cannot be used.",
        "npm error code EBADENGINE",
        'error vite@7.0.0: The engine "node" is incompatible with this module. Expected '
        'version "^20.19.0 || >=22.12.0". Got "20.11.0"',
        " ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported environment (bad pnpm and/or Node.js version)",
    ],
)
def test_a_toolchain_older_than_the_project_declares_is_infra(line: str) -> None:
    """docvet (BMAD v6) requires Python >= 3.12; a 3.11 sandbox is evalflow's limit, not a ✗."""
    category, evidence = _classify(["Obtaining file:///work/clone", line])
    assert category == "infra"
    assert evidence.startswith("the project requires a toolchain version the sandbox lacks")


def test_a_test_that_mentions_python_versions_is_still_the_projects_failure() -> None:
    category, _ = _classify(
        ["FAILED tests/test_cli.py::test_version - assert 'Python 3.12' in 'Python 3.11.7'"]
    )
    assert category == "failed"


def test_timeouts_silent_is_infra_with_output_is_a_failure() -> None:
    assert _classify([], exit_code=-9, timed_out=True, limit_hit="wall time") == (
        "infra",
        "timed out without any output",
    )
    category, evidence = _classify(
        ["collected 3 items", "tests/test_a.py .."], exit_code=-9, timed_out=True
    )
    assert category == "failed"
    assert "tests/test_a.py" in evidence


def test_missing_declared_python_dependency_is_infra_even_naming_a_changed_file() -> None:
    lines = [
        "ImportError while importing test module '/tmp/clone/tests/test_db.py'.",
        "src/app/db.py:1: in <module>",
        "E   ModuleNotFoundError: No module named 'sqlite_utils'",
    ]
    category, evidence = _classify(lines, declared=("sqlite-utils",))
    assert category == "infra"
    assert "sqlite_utils" in evidence


def test_missing_module_the_project_does_not_declare_is_its_failure() -> None:
    lines = ["E   ModuleNotFoundError: No module named 'requests'"]
    assert _classify(lines, declared=("click",))[0] == "failed"
    # A submodule of a found package: the project's own import is wrong.
    lines = ["E   ModuleNotFoundError: No module named 'app.missing'"]
    assert _classify(lines, declared=("app",))[0] == "failed"


def test_import_names_that_differ_from_the_distribution() -> None:
    lines = ["ModuleNotFoundError: No module named 'yaml'"]
    assert _classify(lines, declared=("PyYAML",))[0] == "infra"


def test_the_commands_own_tool_missing_is_infra() -> None:
    lines = ["/usr/bin/python: No module named pytest"]
    assert _classify(lines, tools=command_tools("python -m pytest -q"))[0] == "infra"


@pytest.mark.parametrize(
    ("line", "declared", "category"),
    [
        ("Error: Cannot find module 'vitest/config'", ("vitest",), "infra"),
        (
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@scope/lib' imported",
            ("@scope/lib",),
            "infra",
        ),
        ("src/a.ts(1,20): error TS2307: Cannot find module 'zod' or its type", ("zod",), "infra"),
        ("Error: Cannot find module './util'", ("vitest",), "failed"),
        ("Error: Cannot find module 'left-pad'", ("vitest",), "failed"),
        ('Failed to resolve import "react" from "src/App.tsx"', ("react",), "infra"),
    ],
)
def test_missing_node_modules(line: str, declared: tuple[str, ...], category: str) -> None:
    assert _classify([line], declared=declared)[0] == category


def test_a_real_test_failure_is_failed_with_its_line_as_evidence() -> None:
    lines = [
        "tests/unit/test_proration.py F.",
        "FAILED tests/unit/test_proration.py::test_prorate - assert 10 == 9",
        "1 failed, 1 passed in 0.05s",
    ]
    category, evidence = _classify(lines)
    assert category == "failed"
    assert evidence.startswith("FAILED tests/unit/test_proration.py")


def test_evidence_is_bounded() -> None:
    _, evidence = _classify(["error " + "x" * 1000])
    assert len(evidence) <= 300


# --- declared dependencies, tools, presets --------------------------------------------------


def test_declared_dependencies_from_every_manifest() -> None:
    files = {
        "package.json": json.dumps(
            {"dependencies": {"zod": "^3"}, "devDependencies": {"@types/node": "^20"}}
        ),
        "pyproject.toml": (
            '[project]\nname = "my-app"\ndependencies = ["sqlite-utils>=3", "click"]\n'
            '[project.optional-dependencies]\ntest = ["pytest>=8"]\n'
            '[dependency-groups]\ndev = ["ruff", {include-group = "test"}]\n'
            "[tool.poetry.dependencies]\nhttpx = '*'\n"
        ),
        "requirements-dev.txt": "# tools\nmypy==1.0  # typing\n-r base.txt\n\n",
    }
    assert declared_dependencies(files) == {
        "zod",
        "@types/node",
        "my_app",
        "sqlite_utils",
        "click",
        "pytest",
        "ruff",
        "httpx",
        "mypy",
    }
    assert declared_dependencies({"package.json": "{not json", "pyproject.toml": "[x"}) == set()


@pytest.mark.parametrize(
    ("command", "tools"),
    [
        ("pytest -q", {"pytest"}),
        ("python -m pytest -q", {"python", "pytest"}),
        ("/usr/bin/python3.12 -m mypy.main src", {"python3.12", "mypy"}),
        ("CI=1 npx --yes vitest run", {"npx", "vitest"}),
        ("npm test", {"npm"}),
        ("make && make test", {"make"}),
        ("'unterminated", set()),
        ("$(evil)", set()),
    ],
)
def test_command_tools(command: str, tools: set[str]) -> None:
    assert command_tools(command) == tools


def test_auto_setup_presets() -> None:
    assert auto_setup(["package-lock.json", "package.json"]) == (NPM_CI,)
    assert auto_setup(["pnpm-lock.yaml"]) == ("pnpm install --frozen-lockfile",)
    assert auto_setup(["yarn.lock"]) == ("yarn install --frozen-lockfile",)
    (uv,) = auto_setup(["uv.lock", "pyproject.toml"])
    # A host without uv gets it from PyPI in set-up, outside the clone; the lock is obeyed.
    assert uv.startswith("{ command -v uv >/dev/null || ") and '"$HOME/.evalflow-uv"' in uv
    assert uv.endswith("UV_NATIVE_TLS=true uv sync --frozen")
    (python,) = auto_setup(["pyproject.toml", "requirements-dev.txt", "README.md"])
    assert python.startswith("python -m venv .venv && .venv/bin/python -m pip install")
    assert "-e '.[dev,test]' -r requirements-dev.txt" in python
    (plain,) = auto_setup(["requirements.txt"])
    assert plain.endswith("-r requirements.txt")
    assert "-e" not in plain
    both = auto_setup(["package-lock.json", "pyproject.toml"])
    assert both[0] == NPM_CI
    assert "venv" in both[1]
    assert auto_setup(["README.md", "main.go"]) == ()


def test_auto_setup_installs_the_dev_dependency_groups_a_pyproject_declares() -> None:
    """docvet keeps pytest in `[dependency-groups] dev` (uv's default): without the group the
    unit gate has no pytest and can never run."""
    pyproject = (
        '[project]\nname = "x"\n[dependency-groups]\ndev = ["pytest>=9"]\ndocs = ["mkdocs"]\n'
    )
    (python,) = auto_setup(["pyproject.toml"], pyproject)
    assert python.startswith("python -m venv .venv && .venv/bin/python -m pip install")
    assert "'pip>=25.1' && " in python  # pip reads groups from 25.1 on
    assert python.endswith("-e '.[dev,test]' --group dev")
    assert "docs" not in python
    # No groups, or an unreadable pyproject: the plain install, pip as the venv has it.
    for text in ('[project]\nname = "x"\n', "not = [toml", None):
        (plain,) = auto_setup(["pyproject.toml"], text)
        assert "pip>=25.1" not in plain and "--group" not in plain
    assert dev_groups('[dependency-groups]\ntest = ["pytest"]\ntests = "x"\n') == ("test",)


def test_lockfiles_key_the_caches() -> None:
    assert lockfiles(["README.md", "package.json", "package-lock.json", "requirements-a.txt"]) == (
        "package-lock.json",
        "package.json",
        "requirements-a.txt",
    )


def test_base_comparability() -> None:
    head = ["package.json", "package-lock.json", "src"]
    assert (
        base_incomparable(head, ["README.md", ".specify"], (NPM_CI,)) == "base has no package.json"
    )
    assert base_incomparable(head, ["package.json", "src"], (NPM_CI,)) is None
    assert base_incomparable(["README.md"], ["README.md"], ()) is None
    assert "no project manifest" in (
        base_incomparable(["Makefile"], ["Makefile"], ("make deps",)) or ""
    )
    result = not_comparable(_fail(), "base has no package.json")
    assert result.status == "fail"
    assert result.confirmed
    assert "base not comparable (base has no package.json)" in result.notes[-1]


def test_gate_settings_merge_manifest_over_benchmark() -> None:
    bench = GateSettings(
        setup="auto", gate_env={"A": "1", "B": "2"}, gate_limits={"timeout_s": 100}
    )
    manifest = GateSettings(gate_env={"B": None}, gate_limits={"memory_bytes": 1 << 30})
    merged = manifest.over(bench)
    assert merged.setup == "auto"
    assert merged.gate_env == {"A": "1", "B": None}
    assert merged.gate_limits == {"timeout_s": 100, "memory_bytes": 1 << 30}
    assert merged.require_isolation is None
    assert GateSettings(setup=("npm ci",)).over(bench).setup == ("npm ci",)
    with pytest.raises(ValidationError, match="non-empty"):
        GateSettings(setup=())
    with pytest.raises(ValidationError, match="environment variable"):
        GateSettings(gate_env={"BAD-NAME": "x"})


# --- base comparison --------------------------------------------------------------------


def test_mentions_match_paths_inside_absolute_paths_and_dotted_modules() -> None:
    pattern = mention_pattern(["src/app/core.py", "pkg/__init__.py", "web/app.ts"])
    assert mentioned_paths("/tmp/x/src/app/core.py:3: error", pattern) == {"src/app/core.py"}
    assert mentioned_paths("ImportError: src.app.core failed", pattern) == {"src.app.core"}
    assert mentioned_paths("pkg/__init__.py:1: E", pattern) == {"pkg/__init__.py"}
    assert mentioned_paths("see web/app.tsx", pattern) == set()
    assert mentioned_paths("myweb/app.ts", pattern) == set()
    assert mention_pattern([]) is None


def test_base_passing_means_the_change_broke_it() -> None:
    result = judge_against_base(_fail(), base_exit_code=0, base_timed_out=False, mentioned=[])
    assert result.status == "fail"
    assert result.base_exit_code == 0
    assert "passes on the base commit" in result.notes[-1]


def test_failing_on_base_differently_stays_confirmed() -> None:
    result = judge_against_base(_fail(2), base_exit_code=1, base_timed_out=False, mentioned=[])
    assert result.status == "fail"
    assert "differently" in result.notes[-1]


def test_failing_output_naming_the_diff_stays_confirmed() -> None:
    result = judge_against_base(
        _fail(), base_exit_code=1, base_timed_out=False, mentioned=["src/new.py"]
    )
    assert result.status == "fail"
    assert "src/new.py" in result.notes[-1]


def test_same_failure_on_base_outside_the_diff_is_pre_existing() -> None:
    result = judge_against_base(_fail(), base_exit_code=1, base_timed_out=False, mentioned=[])
    assert result.status == "pre-existing"
    assert result.category == "failed"
    assert not result.confirmed


def test_only_a_failing_gate_is_judged_against_base() -> None:
    passed = GateResult(gate="unit", command="pytest", status="pass", exit_code=0)
    with pytest.raises(ValueError, match="only a failing gate"):
        judge_against_base(passed, base_exit_code=1, base_timed_out=False, mentioned=[])


# --- the table --------------------------------------------------------------------------


def test_gates_frame_shape_and_types() -> None:
    results = [
        GateResult(gate="setup", command=NPM_CI, status="pass", exit_code=0, setup_command=NPM_CI),
        GateResult(
            gate="build", command="make", status="pass", exit_code=0, duration_s=1.5, cached=True
        ),
        unscored_result("lint"),
        judge_against_base(_fail(), base_exit_code=1, base_timed_out=False, mentioned=[]),
        _fail(-9, timed_out=True),
        _not_run(isolation_missing=("memory_limit",)),
    ]
    frame = gates_frame("b.f.r1", results)
    assert list(frame.columns) == GATE_RESULT_COLUMNS
    assert frame["status"].tolist() == [
        "pass",
        "pass",
        "unscored",
        "pre-existing",
        "fail",
        "not-run",
    ]
    assert frame["confirmed"].tolist() == [False, False, False, False, True, False]
    assert frame["category"].tolist()[2:] == ["unconfigured", "failed", "failed", "infra"]
    assert frame["cached"].tolist() == [False, True, False, False, False, False]
    assert frame["isolation_missing"].iloc[5] == ["memory_limit"]
    assert frame["setup_command"].iloc[0] == NPM_CI
    assert str(frame["exit_code"].dtype) == "Int64"
    assert pd.isna(frame["exit_code"].iloc[2])
    assert pd.isna(frame["probe_command"].iloc[2])
    assert frame["probe_command"].iloc[5] == "docker compose up"
    assert frame["base_exit_code"].iloc[3] == 1
    assert failed_by_run(frame) == {"b.f.r1": True}
    assert failed_by_run(gates_frame("x", [])) == {}
