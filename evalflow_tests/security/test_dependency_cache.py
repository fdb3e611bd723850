"""One framework run's setup cannot plant a file that another run's gates then read.

The dependency download cache is writable in setup and read by the gates (npm offline); two
runs with the same setup and lockfiles shared one directory, so run A's setup could leave a
package, or any file, for run B's gates.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evalflow.domain.models import GateCommands, GateSettings
from evalflow.gates import GateCaches, run_gates

# The same setup for every run; it plants whatever the repository brings.
PLANTING_SETUP = (
    'mkdir -p "$npm_config_cache" && { [ ! -f plant.txt ] || cp plant.txt "$npm_config_cache/"; }'
)
READER = GateCommands(unit='cat "$npm_config_cache/plant.txt" 2>/dev/null || echo nothing-planted')
LOCK = {"package-lock.json": '{"lockfileVersion": 3}\n'}


def _unit_tail(repo: Path, caches: GateCaches) -> str:
    results = run_gates(
        repo,
        "head",
        "base",
        READER,
        [],
        timeout_s=30,
        settings=GateSettings(setup=PLANTING_SETUP),
        caches=caches,
    )
    by_gate = {r.gate: r for r in results}
    assert by_gate["setup"].status == "pass", by_gate["setup"]
    return by_gate["unit"].output_tail or ""


def test_a_runs_setup_cannot_plant_a_file_another_runs_gates_read(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    caches = GateCaches.under(tmp_path / "work")
    run_a = make_repo({"README.md": "x\n"}, {**LOCK, "plant.txt": "planted-by-run-a\n"})
    run_b = make_repo({"README.md": "x\n"}, LOCK)
    # Within one run the cache works: A's gates read what A's setup put there.
    assert "planted-by-run-a" in _unit_tail(run_a, caches)
    # Same setup, same lockfile: B's gates must not see A's file.
    assert _unit_tail(run_b, caches).strip() == "nothing-planted"


def test_two_folders_of_one_repository_get_caches_of_their_own(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # A bake-off layout: two frameworks' runs in one repository, each confined to its root:.
    caches = GateCaches.under(tmp_path / "work")
    repo = make_repo(
        {"README.md": "x\n"},
        {
            **{f"a/{k}": v for k, v in LOCK.items()},
            "a/plant.txt": "planted-by-a\n",
            **{f"b/{k}": v for k, v in LOCK.items()},
        },
    )

    def tail(root: str) -> str:
        results = run_gates(
            repo, "head", "base", READER, [], timeout_s=30,
            settings=GateSettings(setup=PLANTING_SETUP), caches=caches, root=root,
        )  # fmt: skip
        return {r.gate: r for r in results}["unit"].output_tail or ""

    assert "planted-by-a" in tail("a")
    assert tail("b").strip() == "nothing-planted"
