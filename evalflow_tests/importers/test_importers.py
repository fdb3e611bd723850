"""Each importer on its fixture (written for evalflow, not copied): stories, stable AC ids,
original texts, priorities (ASSUMED when unknown), out-of-scope items kept whole, and a
`prd.md` that reads back the same through the PRD parser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalflow.domain.gates import NPM_CI
from evalflow.domain.prd import SPEC_KIT_PRIORITY_MAP
from evalflow.errors import InputError
from evalflow.importers import IMPORTERS
from evalflow.importers.model import (
    DEFAULT_PRIORITIES,
    check_round_trip,
    parse_priority_map,
    render_prd,
)
from evalflow.importers.project import Commit, guess_base, guess_gates, guess_root, in_root

FIXTURES = Path(__file__).parent / "fixtures"


def _files(fmt: str) -> dict[str, str]:
    root = FIXTURES / fmt
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _imported(fmt: str, spec: str | None = None, mapping=None):
    prd = IMPORTERS[re.sub(r"-(?:v\d+|ja)$", "", fmt)](_files(fmt), spec, mapping)
    base = SPEC_KIT_PRIORITY_MAP if fmt == "spec-kit" else DEFAULT_PRIORITIES
    check_round_trip(prd, render_prd(prd, mapping or base, "0" * 40))
    return prd


def _shape(prd) -> list[tuple]:
    return [(s.id, s.label, s.priority, s.assumed, [a.id for a in s.acs]) for s in prd.stories]


def test_spec_kit_p1_to_p5_unknown_assumed_and_scope() -> None:
    prd = _imported("spec-kit")
    assert _shape(prd) == [
        ("US1", "P1", "P0", False, ["US1-AC1", "US1-AC2"]),
        ("US2", "P4", "P2", False, ["US2-AC1"]),
        ("US3", "P5", "P2", False, ["US3-AC1"]),
        ("US4", "P7", "P1", True, ["US4-AC1"]),
    ]
    assert prd.stories[0].acs[1].text == (
        "Given an item exists, When the cook adds it again, Then the request is rejected with 409"
    )
    assert prd.out_of_scope == (
        "Shopping lists (a later feature)",
        "Recipes",
        "Multi-user pantries are out of scope (single cook, v1).",
        "Nutrition data (calories, macros): per item; per meal",
    )
    assert prd.assumptions == ("Cooks have one pantry each.",)
    assert [r.split(":")[0] for r in prd.requirements] == ["FR-001", "FR-002"]
    assert "Independent Test is US4-AC1" in prd.notes[0]
    text = render_prd(prd, SPEC_KIT_PRIORITY_MAP, "0" * 40)
    assert "Story US4 (Barcode scan): unknown priority label 'P7'; priority ASSUMED P1." in text


def test_priority_map_is_configurable_and_checked() -> None:
    mapping = parse_priority_map("P4=P1, p7=P0", SPEC_KIT_PRIORITY_MAP)
    prd = _imported("spec-kit", mapping=mapping)
    assert [(s.id, s.priority, s.assumed) for s in prd.stories][1:] == [
        ("US2", "P1", False), ("US3", "P2", False), ("US4", "P0", False)
    ]  # fmt: skip
    with pytest.raises(InputError, match="invalid priority mapping entry 'P1:P0'"):
        parse_priority_map("P1:P0", SPEC_KIT_PRIORITY_MAP)


def test_kiro_ears_criteria() -> None:
    prd = _imported("kiro")
    assert _shape(prd) == [
        ("R1", None, "P1", True, ["R1-AC1", "R1-AC2"]),
        ("R2", "P0", "P0", False, ["R2-AC1"]),
    ]
    assert prd.stories[0].title.startswith("As a cook, I want to add items")
    assert prd.out_of_scope == ("Barcode scanning (needs a camera)",)
    assert len(prd.sources) == 3


def test_bmad_story_file_refines_the_prd() -> None:
    prd = _imported("bmad")
    assert _shape(prd) == [
        ("S1.1", None, "P1", True, ["S1.1-AC1", "S1.1-AC2", "S1.1-AC3"]),
        ("S1.2", "HIGH", "P0", False, ["S1.2-AC1"]),
    ]
    assert prd.stories[0].acs[0].text.startswith("`POST /items` with a name returns 201")
    assert prd.out_of_scope == ("Recipes (later)",)


def test_openspec_specs_and_change_deltas() -> None:
    prd = _imported("openspec")
    assert _shape(prd) == [("R1", None, "P1", True, ["R1-AC1", "R1-AC2"])]
    assert prd.stories[0].acs[0].text == (
        "New item: WHEN the cook adds an item; THEN the item is stored; "
        "AND the response carries its id"
    )
    change = _imported("openspec", "openspec/changes/add-expiry")
    assert _shape(change) == [("R1", None, "P1", True, ["R1-AC1"])]
    assert change.out_of_scope == (
        "pantry: Manual expiry notes (removed by this change)",
        "Push notifications",
    )


def test_markdown_prd_unknown_label_goes_through_the_mapping() -> None:
    prd = _imported("markdown")
    assert _shape(prd) == [
        ("S1", "P0", "P0", False, ["S1-AC1", "S1-AC2"]),
        ("S2", "P3", "P2", False, ["S2-AC1"]),
    ]
    assert prd.out_of_scope == ("Recipes",)


@pytest.mark.parametrize("fmt", ["spec-kit", "kiro", "bmad", "openspec", "markdown"])
def test_missing_artefacts_are_one_clear_error(fmt: str) -> None:
    with pytest.raises(InputError) as info:
        IMPORTERS[fmt]({"README.md": "# nothing\n"}, None, None)
    assert info.value.fix


def test_guess_base_and_gates() -> None:
    spec = "specs/003-pantry"
    history = [
        Commit("a" * 40, None, ("README.md", ".specify/memory/constitution.md")),
        Commit("b" * 40, "a" * 40, (f"{spec}/spec.md",)),
        Commit("c" * 40, "b" * 40, (f"{spec}/plan.md", f"{spec}/tasks.md")),
        Commit("d" * 40, "c" * 40, ("app/main.py", f"{spec}/tasks.md")),
    ]
    assert guess_base(history, spec)[0] == "c" * 40
    together = [history[0], Commit("e" * 40, "a" * 40, (f"{spec}/spec.md", "app/main.py"))]
    assert guess_base(together, spec)[0] == "a" * 40
    assert guess_base(history[:1], spec)[0] is None
    gates = guess_gates({
        "requirements.txt": "", "app/main.py": "", "tests/unit/test_a.py": "",
        "tests/integration/test_b.py": "", "pyproject.toml": "[tool.ruff]\n",
    })  # fmt: skip
    assert {k: v[0] for k, v in gates.items()} == {
        "setup": "auto",  # a .venv inside the sandboxed clone, not a bare pip install
        "build": "python -m compileall -q app",
        "lint": "python -m ruff check .",
        "unit": "python -m pytest -q tests/unit",
        "e2e": "python -m pytest -q tests/integration",
    }
    js = guess_gates({"package.json": '{"scripts": {"build": "x", "test": "y"}}'})
    assert {k: v[0] for k, v in js.items()} == {
        "setup": "npm install", "build": "npm run build", "unit": "npm run test"
    }  # fmt: skip
    locked = guess_gates({"package.json": "{}", "package-lock.json": "{}"})
    assert locked["setup"] == ("auto", "package.json: evalflow's standard install inside the clone")


def test_guess_root_finds_one_spec_folder_per_framework() -> None:
    # The bake-off layout: spec-kit and BMAD built the same PRD side by side.
    paths = [
        ".specify/memory/constitution.md",  # installed at the top: no run's home of its own
        "exp/speckit/specs/001-planner/spec.md",
        "exp/speckit/package.json",
        "exp/bmad/docs/prd.md",
        "exp/bmad/node_modules/x/specs/a.md",
        "exp/kiro/.kiro/specs/planner/requirements.md",
    ]
    root, why = guess_root(paths, "exp/speckit/specs/001-planner") or ("", "")
    assert root == "exp/speckit"
    assert why == (
        "one spec folder per framework: exp/speckit/ holds this run's spec, exp/bmad/, exp/kiro/ "
        "another"
    )
    assert guess_root(paths, "exp/bmad/docs")[0] == "exp/bmad"
    assert guess_root(paths, "exp/kiro/.kiro/specs/planner")[0] == "exp/kiro"
    # One framework's spec in the repository: the run is the whole repository.
    assert guess_root(["specs/001/spec.md", "app/main.py"], "specs/001") is None
    assert guess_root(["app/specs/001/spec.md"], "app/specs/001") is None
    files = {"exp/speckit/package.json": "{}", "exp/bmad/package.json": "{}"}
    assert in_root(files, "exp/speckit") == {"package.json": "{}"}
    assert in_root(files, None) == files


def test_code_spans_keep_their_stars_and_underscores() -> None:
    from evalflow.importers.mdtext import strip_emphasis
    from evalflow.importers.model import ac_text

    line = "**Independent Test**: run `install --root categories/*.toml` on `__init__.py`"
    assert (
        strip_emphasis(line)
        == "Independent Test: run `install --root categories/*.toml` on `__init__.py`"
    )
    assert ac_text("**Given** `src/**` and __x__") == "Given `src/**` and x"


def test_bmad_v6_epics_blocks_and_implementation_artifacts() -> None:
    # v6 writes one Given/When/Then block per AC (blank-line separated) under "### Story E.S"
    # in epics.md, and "**AC1 — title:**" + bullets in implementation-artifacts/E-S-*.md.
    prd = _imported("bmad-v6")
    assert _shape(prd) == [
        ("S1.1", None, "P1", True, ["S1.1-AC1", "S1.1-AC2"]),
        ("S1.2", None, "P1", True, ["S1.2-AC1", "S1.2-AC2"]),
    ]
    assert prd.stories[0].acs[0].text == (
        "Given I am on the pantry page When I type a name and press Enter Then the item appears "
        "at the top of the list (optimistic — no spinner) And `POST /api/items` is called with "
        "the name"
    )
    assert prd.stories[0].acs[1].text.endswith("no API call is made and the input shows a hint")
    assert prd.stories[1].acs[1].text == (
        'Given the delete confirmation is open When I click "Cancel" Then no API call is made'
    )
    assert prd.stories[1].acs[0].source.startswith("_bmad-output/implementation-artifacts/")
    assert prd.out_of_scope == ("Recipes (later)",)
    assert any("1-2-remove-an-item.md (refined) over" in n for n in prd.notes)


def test_bmad_v6_story_file_with_one_given_when_then_per_list_item() -> None:
    # A v6 story file may write each AC as one numbered item, Given, when and then inline,
    # ending with its epic cross-reference: each item is one AC (on Alberto-Codes/docvet the
    # five of Story 1.2 were read as one AC), the "(AC: #n)" label is no behaviour.
    story = (
        "# Story 1.2: Create Finding Dataclass\n\n## Acceptance Criteria\n\n"
        "1. **Given** the module, **when** imported, **then** it exports `Finding` (AC: #1)\n\n"
        "2. **Given** a `Finding`, **when** a field is assigned, **then** an error is raised "
        "(AC: #2, #3)\n\n"
        "3. **Given** the `rule` field, **when** constructed, **then** it accepts any string\n"
        "   **And** the value is kept\n\n## Tasks / Subtasks\n\n- [x] Task 1 (AC: #1)\n"
    )
    files = {"_bmad-output/implementation-artifacts/1-2-finding.md": story}
    prd = IMPORTERS["bmad"](files, None, None)
    assert [a.text for a in prd.stories[0].acs] == [
        "Given the module, when imported, then it exports `Finding`",
        "Given a `Finding`, when a field is assigned, then an error is raised",
        "Given the `rule` field, when constructed, then it accepts any string And the value "
        "is kept",
    ]


def test_gates_follow_what_the_project_declares() -> None:
    def gates(files: dict[str, str]) -> dict:
        return {k: v[0] for k, v in guess_gates(files).items()}

    # pytest's declared testpaths: the project's own `pytest`, never split by folder.
    declared = gates({
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n[tool.mypy]\n',
        "app/main.py": "", "tests/unit/test_a.py": "", "tests/e2e/test_b.py": "",
    })  # fmt: skip
    assert declared["unit"] == "python -m pytest -q" and "e2e" not in declared
    assert declared["lint"] == "python -m mypy ."  # the declared typecheck
    assert "testpaths = tests" in guess_gates({"pytest.ini": "[pytest]\ntestpaths = tests\n",
                                               "a.py": ""})["unit"][1]  # fmt: skip
    # test_*.py at the top level, tox's pytest, Makefile targets.
    assert gates({"requirements.txt": "", "test_app.py": ""})["unit"] == "python -m pytest -q"
    tox = "[testenv]\ncommands = pytest -x {posargs}\n"
    assert gates({"tox.ini": tox, "setup.py": "", "a/b.py": ""})["unit"] == "python -m pytest -x"
    make = gates({"Makefile": "test:\n\tgo test ./...\nlint:\n\tgolangci-lint run\n", "go.mod": ""})
    assert (make["unit"], make["lint"]) == ("make test", "make lint")
    # package.json scripts: lint and typecheck are both the project's static checks.
    js = guess_gates({
        "package.json": '{"scripts": {"lint": "eslint .", "typecheck": "tsc --noEmit"}}',
        "package-lock.json": "{}", "src/a.ts": "", "requirements.txt": "",
    })  # fmt: skip
    assert js["lint"][0] == "npm run lint && npm run typecheck"
    # A stray requirements.txt in a TypeScript repository installs nothing.
    assert js["setup"][0] == (NPM_CI,) and "requirements.txt ignored" in js["setup"][1]


def test_kiro_feature_found_by_its_config_outside_kiro_specs() -> None:
    # `.kiro/specs` may be a symbolic link (`-> ../.specs`), which a snapshot never follows:
    # the folder with Kiro's `.config.kiro` beside requirements.md is the feature.
    req = (
        "# Requirements\n\n### Requirement 1: Paging\n\n#### Acceptance Criteria\n\n"
        "1. WHEN no `limit` is given, THE API SHALL return 50 messages\n"
    )
    files = {
        ".specs/a-search/.config.kiro": "{}", ".specs/a-search/requirements.md": req,
        ".specs/b-paging/.config.kiro": "{}", ".specs/b-paging/requirements.md": req,
        "docs/requirements.md": req,  # no .config.kiro beside it: not a Kiro feature
    }  # fmt: skip
    prd = IMPORTERS["kiro"](files, None, None)
    assert prd.spec_dir == ".specs/b-paging"
    assert prd.stories[0].acs[0].text.startswith("WHEN no `limit` is given")
    with pytest.raises(InputError, match="no Kiro feature found"):
        IMPORTERS["kiro"]({"docs/requirements.md": req}, None, None)


def test_kiro_in_japanese_is_imported_verbatim() -> None:
    # Kiro writes its headings in the user's language (要件 / 受け入れ基準); the ACs stay as
    # written and the drafter flags them for manual decomposition.
    prd = _imported("kiro-ja")
    assert _shape(prd) == [("R1", None, "P1", True, ["R1-AC1", "R1-AC2"])]
    assert prd.stories[0].title.startswith("料理人として")
    assert prd.stories[0].acs[1].text == "食材名が空のとき、システムはエラーを表示する"


def test_gates_of_a_project_that_lives_in_a_subfolder() -> None:
    # Real repositories keep the app in web/ or frontend/: nothing at the root to install.
    gates = guess_gates({
        "README.md": "",
        "web/package.json": '{"scripts": {"build": "next build", "test": "vitest"}}',
        "web/package-lock.json": "{}", "web/app/page.tsx": "", "api/Program.cs": "",
        "docs/package.json": "{}",  # no lockfile: which installer is not said, left alone
    })  # fmt: skip
    assert gates["setup"][0] == (f"cd web && {NPM_CI}",)
    assert gates["build"] == ("(cd web && npm run build)", "web/: package.json scripts.build")
    assert gates["unit"][0] == "(cd web && npm run test)"
