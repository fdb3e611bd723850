"""Gates on real toolchains: a TypeScript project (npm ci, tsc, eslint, vitest) and a Python
project (a venv with a dependency evalflow does not have, pytest).

The fixture repositories are built from `fixtures/`: base is a spec-kit-like template commit
(no package.json / pyproject.toml, so base is not comparable), head the project. Setup
downloads from the npm registry and PyPI into each test's own download cache (the cache is
per framework run, so one could not be shared between test repositories). Slow: run by
`.ci/run`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evalflow.domain.gates import GateResult, confirmed_failure, failed_by_run, gates_frame
from evalflow.domain.models import GateCommands, GateSettings
from evalflow.gates import GateCaches, probe_isolation, run_gates
from evalflow.gates import runner as runner_module

FIXTURES = Path(__file__).parent / "fixtures"
TEMPLATE = {
    "README.md": "# project\n",
    ".specify/memory/constitution.md": "# Constitution\n",
}
TS_GATES = GateCommands(
    build="npm run build",
    lint="npm run lint",
    unit="npm run test:unit",
    e2e="npm run test:e2e",
)
PY_GATES = GateCommands(
    build="python -m compileall -q src",
    unit="python -m pytest -q -p no:cacheprovider tests",
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    pytest.mark.skipif(
        not probe_isolation().network, reason="no network namespace: gates would be online"
    ),
]


def _tree(*names: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for name in names:
        root = FIXTURES / name
        for path in sorted(root.rglob("*")):
            if path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return files


@pytest.fixture
def caches(tmp_path: Path) -> GateCaches:
    return GateCaches.under(tmp_path)


@pytest.fixture
def executions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every command the runner executes (setup and gates, head and base)."""
    seen: list[str] = []
    real = runner_module.execute

    def counting(command: str, **kwargs: object):
        seen.append(command)
        return real(command, **kwargs)

    monkeypatch.setattr(runner_module, "execute", counting)
    yield seen


def _by_gate(results: list[GateResult]) -> dict[str, GateResult]:
    return {r.gate: r for r in results}


def _adjusts_final(results: list[GateResult]) -> bool:
    """What the roll-up reads (`gates_failed` ⇒ Adjusted Final = Final × 0.5)."""
    return failed_by_run(gates_frame("b.f.r1", results)).get("b.f.r1", False)


def test_typescript_project_passes_and_an_unchanged_run_reuses_every_result(
    make_repo: Callable[..., Path], caches: GateCaches, executions: list[str]
) -> None:
    repo = make_repo(TEMPLATE, _tree("ts_project"))
    settings = GateSettings(setup="auto")
    first = run_gates(
        repo, "head", "base", TS_GATES, ["src/cart.ts"], settings=settings, caches=caches
    )
    by_gate = _by_gate(first)
    assert [r.gate for r in first] == ["setup", "build", "lint", "unit", "e2e"]
    for result in first:
        assert result.status == "pass", (result.gate, result.evidence, result.output_tail)
    assert by_gate["setup"].command == "npm ci --no-audit --no-fund"
    assert by_gate["unit"].setup_command == "npm ci --no-audit --no-fund"
    # The memory-hungry test (a 4 GiB WebAssembly reservation) ran under the default limits.
    assert "3 passed" in by_gate["unit"].output_tail or "passed (3)" in by_gate["unit"].output_tail
    assert not _adjusts_final(first)
    assert len(executions) == 5

    executions.clear()
    second = run_gates(
        repo, "head", "base", TS_GATES, ["src/cart.ts"], settings=settings, caches=caches
    )
    assert executions == []
    assert all(r.cached for r in second)
    assert [r.ran_at for r in second] == [r.ran_at for r in first]
    assert [r.status for r in second] == [r.status for r in first]

    rerun = run_gates(
        repo,
        "head",
        "base",
        TS_GATES,
        ["src/cart.ts"],
        settings=settings,
        caches=caches,
        rerun=True,
    )
    assert len(executions) == 5
    assert not any(r.cached for r in rerun)


def test_typescript_failing_test_is_a_confirmed_failure(
    make_repo: Callable[..., Path], caches: GateCaches
) -> None:
    repo = make_repo(TEMPLATE, _tree("ts_project", "ts_failing"))
    results = run_gates(
        repo,
        "head",
        "base",
        TS_GATES,
        ["src/cart.ts", "tests/unit/discount.test.ts"],
        settings=GateSettings(setup="auto"),
        caches=caches,
    )
    by_gate = _by_gate(results)
    assert by_gate["unit"].status == "fail"
    assert by_gate["unit"].category == "failed"
    assert "discount" in by_gate["unit"].output_tail
    # Base is the template commit: nothing to compare, so the failure stands on its own.
    assert "base not comparable (base has no package.json)" in by_gate["unit"].notes[-1]
    assert [by_gate[g].status for g in ("setup", "build", "lint", "e2e")] == ["pass"] * 4
    assert _adjusts_final(results)


def test_typescript_without_setup_is_not_run_infra_never_a_failure(
    make_repo: Callable[..., Path], caches: GateCaches
) -> None:
    repo = make_repo(TEMPLATE, _tree("ts_project"))
    results = run_gates(repo, "head", "base", TS_GATES, ["src/cart.ts"], caches=caches)
    assert [r.gate for r in results] == ["build", "lint", "unit", "e2e"]
    for result in results:
        assert result.status == "not-run", (result.gate, result.output_tail)
        assert result.category == "infra"
        assert result.probe is not None
        assert result.probe.command == getattr(TS_GATES, result.gate)
    assert "tsc: not found" in (_by_gate(results)["build"].evidence or "")
    assert "vitest: not found" in (_by_gate(results)["unit"].evidence or "")
    assert not _adjusts_final(results)


def test_python_project_gets_its_own_venv_and_passes(
    make_repo: Callable[..., Path], caches: GateCaches
) -> None:
    repo = make_repo(TEMPLATE, _tree("py_project"))
    results = run_gates(
        repo,
        "head",
        "base",
        PY_GATES,
        ["src/shelfsize/__init__.py"],
        settings=GateSettings(setup="auto"),
        caches=caches,
    )
    by_gate = _by_gate(results)
    assert by_gate["setup"].status == "pass", by_gate["setup"].output_tail
    assert ".venv/bin/python -m pip install" in (by_gate["setup"].command or "")
    assert by_gate["build"].status == "pass"
    assert by_gate["unit"].status == "pass", by_gate["unit"].output_tail
    assert "1 passed" in by_gate["unit"].output_tail
    assert not _adjusts_final(results)


def test_uv_project_gets_uv_in_setup_and_passes(
    make_repo: Callable[..., Path], caches: GateCaches, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A host without uv (this one, or PATH stripped of it): setup installs uv from PyPI into
    # the sandbox's home, then `uv sync --frozen` builds the clone's .venv from uv.lock.
    monkeypatch.setenv("PATH", os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "uv").exists()
    ))  # fmt: skip
    repo = make_repo(TEMPLATE, _tree("uv_project"))
    results = run_gates(
        repo,
        "head",
        "base",
        PY_GATES,
        ["src/shelfsize/__init__.py"],
        settings=GateSettings(setup="auto"),
        caches=caches,
    )
    by_gate = _by_gate(results)
    assert by_gate["setup"].status == "pass", by_gate["setup"].output_tail
    assert "uv sync --frozen" in (by_gate["setup"].command or "")
    assert by_gate["unit"].status == "pass", by_gate["unit"].output_tail
    assert "1 passed" in by_gate["unit"].output_tail


def test_python_project_without_setup_is_not_run_on_its_missing_dependency(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo(TEMPLATE, _tree("py_project"))
    results = run_gates(repo, "head", "base", PY_GATES, ["src/shelfsize/__init__.py"])
    unit = _by_gate(results)["unit"]
    # The output names a changed file (src/shelfsize/__init__.py): still not the project's fault.
    assert unit.status == "not-run"
    assert unit.category == "infra"
    assert "humanize" in (unit.evidence or "")
    assert not confirmed_failure(results)
