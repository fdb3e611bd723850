"""A tiny benchmark (two stories, two runs) for pipeline tests: fast and fully known.

Each AC fixes the names its probes pin (`bye`, "Hello, Ada"), so the heuristic judge's UNMETs
for the partial run are proven absences (SPEC §5), not the silence of a fitted probe."""

from __future__ import annotations

from pathlib import Path

import yaml

PRD = """\
# PRD: Mini

## Story S1: Greeting (P0)
- S1-AC1: The service greets by name ("Hello, Ada" for Ada).

## Story S2: Farewell (P1)
- S2-AC1: The service says goodbye (`bye`).
"""

BASELINE = r"""
benchmark: mini
prd: prd.md
acs:
  - id: S1-AC1
    text: 'The service greets by name ("Hello, Ada" for Ada).'
    checks:
      - id: S1-AC1-I1
        kind: I
        proposition: greet(name) uses the name
        probes: [{kind: impl, pattern: 'f"Hello, \{name\}', path_globs: ["app/**"]}]
      - id: S1-AC1-T1
        kind: T
        level: unit
        proposition: a test asserts the greeting
        probes: [{kind: test-assert, pattern: 'assert .*"Hello, Ada"', path_globs: ["tests/**"]}]
  - id: S2-AC1
    text: "The service says goodbye (`bye`)."
    checks:
      - id: S2-AC1-I1
        kind: I
        proposition: bye() exists
        probes: [{kind: impl, pattern: 'def bye\(', path_globs: ["app/**"]}]
      - id: S2-AC1-T1
        kind: T
        level: unit
        proposition: a test asserts the farewell
        probes: [{kind: test-assert, pattern: 'assert bye\(', path_globs: ["tests/**"]}]
"""

GOOD = {
    "app/core.py": (
        'def greet(name):\n    return f"Hello, {name}"\n\n\ndef bye():\n    return "bye"\n'
    ),
    "tests/test_core.py": (
        "from app.core import bye, greet\n\n\ndef test_greet():\n"
        '    assert greet("Ada") == "Hello, Ada"\n\n\ndef test_bye():\n    assert bye() == "bye"\n'
    ),
}
PARTIAL = {
    "app/core.py": 'def greet(name):\n    return f"Hello, {name}"\n',
    "tests/test_core.py": 'from app.core import greet\n\n\ndef test_greet():\n    greet("Ada")\n',
}


def write_source(root: Path, files: dict[str, str]) -> None:
    (root / "base").mkdir(parents=True)
    (root / "base" / "README.md").write_text("mini\n")
    for name, text in files.items():
        path = root / "tree" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "build.yaml").write_text(
        yaml.safe_dump(
            {
                "commits": [
                    {"tree": "base", "message": "base", "tag": "base"},
                    {"tree": "tree", "message": "impl", "tag": "head"},
                ]
            }
        )
    )


def make_mini(tmp_path: Path) -> Path:
    """`<tmp>/benchmarks/mini` with runs good (Final 1.00) and partial (Final 0.36)."""
    bench = tmp_path / "benchmarks" / "mini"
    (bench / "runs").mkdir(parents=True)
    (bench / "prd.md").write_text(PRD)
    (bench / "_ac-baseline.yaml").write_text(BASELINE)
    for name, files in (("good", GOOD), ("partial", PARTIAL)):
        write_source(bench / "sources" / name, files)
        manifest = {
            "benchmark": "mini",
            "framework": name,
            "run": "r1",
            "source": f"../sources/{name}",
            "base": "base",
            "head": "head",
        }
        (bench / "runs" / f"{name}.yaml").write_text(yaml.safe_dump(manifest))
    return bench
