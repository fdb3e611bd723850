"""Benchmark the test inventory (`build_inventory`) over a generated repository.

The repository is generated in memory, deterministically (numpy default_rng, fixed seed):
2,000 test functions split evenly between Python (pytest + unittest) and TypeScript
(Jest/Vitest style) test files, about a fifth of them parametrised, mixed real / mock-only
/ executed-only assertions and local helpers, plus production modules that the file
filter must skip, padded to 50,000 lines. The inventory runs with added lines from a
synthetic diff so feature classification is part of the timed work.

Measured (median of repeats): `build_inventory` with the cached parsers and queries,
against a baseline that rebuilds the tree-sitter language, parser and queries for every
file (the naive way). Target: < 5 s for the full repository.

Run from the repository root: `.venv/bin/python benchmarks/bench_test_inventory.py [--quick]`
(`--quick`: a fifth of the repository, 3 repeats).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from evalflow.repo.test_inventory import (
    InventoryResult,
    LevelConventions,
    build_inventory,
    classify_feature_tests,
    is_test_file,
    scan_test_file,
)
from evalflow.repo.tests_common import reset_parser_caches

SEED = 20250214
TARGET_S = 5.0
TESTS_PER_FILE = 10


def _python_test(rng: np.random.Generator, index: int, in_class: bool) -> list[str]:
    indent = "    " if in_class else ""
    self_arg = "self, " if in_class else ""
    lines: list[str] = []
    params = ""
    if rng.random() < 0.2:
        rows = int(rng.integers(2, 6))
        lines.append(f'{indent}@pytest.mark.parametrize("value", [')
        lines.extend(f"{indent}    {r * 3 + index}," for r in range(rows))
        lines.append(f"{indent}])")
        params = "value"
    else:
        lines.append(f"{indent}@pytest.mark.timeout(5)")
    lines.append(f"{indent}def test_case_{index}({self_arg}{params}):")
    lines.append(f'{indent}    """Checks behaviour number {index}."""')
    for step in range(int(rng.integers(8, 14))):
        lines.append(f"{indent}    item_{step} = build_item({index}, {step}, name='x{step}')")
    kind = rng.random()
    if kind < 0.6:
        lines.append(f"{indent}    assert item_0.total == {index}")
        lines.append(f"{indent}    _check_item(item_1)")
    elif kind < 0.8:
        lines.append(f"{indent}    repo.save.assert_called_once_with(item_0)")
        lines.append(f"{indent}    assert repo.load.call_count == 1")
    elif kind < 0.9:
        lines.append(f"{indent}    with pytest.raises(ValueError):")
        lines.append(f"{indent}        item_0.validate()")
    else:
        lines.append(f"{indent}    service.process(item_0)")
    lines.append("")
    return lines


def _python_file(rng: np.random.Generator, number: int) -> str:
    lines = [
        f'"""Generated test module {number}."""',
        "import pytest",
        "from unittest import mock",
        "from app.items import build_item",
        "",
        "",
        "def _check_item(item):",
        "    assert item.valid",
        "",
        "",
    ]
    for index in range(TESTS_PER_FILE // 2):
        lines.extend(_python_test(rng, index, in_class=False))
    lines.append(f"class TestGroup{number}:")
    for index in range(TESTS_PER_FILE // 2, TESTS_PER_FILE):
        lines.extend(_python_test(rng, index, in_class=True))
    return "\n".join(lines) + "\n"


def _ts_test(rng: np.random.Generator, index: int) -> list[str]:
    lines: list[str] = []
    if rng.random() < 0.2:
        rows = int(rng.integers(2, 6))
        lines.append("  it.each([")
        lines.extend(f"    [{r}, {r + index}]," for r in range(rows))
        lines.append(f"  ])('case {index} %i', (a: number, b: number) => {{")
    else:
        lines.append(f"  it('case {index}', async () => {{")
    for step in range(int(rng.integers(8, 14))):
        lines.append(f"    const item{step} = buildItem({index}, {step}, {{ name: 'x{step}' }});")
    kind = rng.random()
    if kind < 0.6:
        lines.append(f"    expect(item0.total).toBe({index});")
        lines.append("    expectValid(item1);")
    elif kind < 0.8:
        lines.append("    expect(repo.save).toHaveBeenCalledWith(item0);")
        lines.append("    expect(repo.load).toHaveBeenCalledTimes(1);")
    elif kind < 0.9:
        lines.append("    await expect(item0.validate()).rejects.toThrow('bad');")
    else:
        lines.append("    await service.process(item0);")
    lines.append("  });")
    lines.append("")
    return lines


def _ts_file(rng: np.random.Generator, number: int) -> str:
    lines = [
        "import { describe, it, expect, vi } from 'vitest';",
        "import { buildItem } from '../src/items';",
        "",
        "function expectValid(item: { valid: boolean }): void {",
        "  expect(item.valid).toBe(true);",
        "}",
        "",
        f"describe('module {number}', () => {{",
    ]
    for index in range(TESTS_PER_FILE):
        lines.extend(_ts_test(rng, index))
    lines.append("});")
    return "\n".join(lines) + "\n"


def _production_file(number: int, n_lines: int) -> str:
    lines = [f'"""Generated production module {number}."""', ""]
    function = 0
    while len(lines) < n_lines:
        lines.append(f"def function_{function}(value):")
        lines.extend(f"    value = value + {step}" for step in range(8))
        lines.append("    return value")
        lines.append("")
        function += 1
    return "\n".join(lines[:n_lines]) + "\n"


def generate_repository(n_tests: int, n_lines: int) -> list[tuple[str, str]]:
    """`(path, text)` files: half the tests in Python, half in TypeScript."""
    rng = np.random.default_rng(SEED)
    n_files = n_tests // TESTS_PER_FILE
    files: list[tuple[str, str]] = []
    for number in range(n_files // 2):
        files.append((f"tests/unit/test_module_{number:04d}.py", _python_file(rng, number)))
        files.append((f"web/tests/module_{number:04d}.test.ts", _ts_file(rng, number)))
    used = sum(text.count("\n") for _, text in files)
    remaining = max(n_lines - used, 0)
    n_production = max(remaining // 400, 1)
    for number in range(n_production):
        size = remaining // n_production + (1 if number < remaining % n_production else 0)
        files.append((f"app/module_{number:04d}.py", _production_file(number, size)))
    return files


def synthetic_added_lines(files: list[tuple[str, str]]) -> dict[str, set[int]]:
    """Every third test file gains its whole second half, as a diff would report."""
    added: dict[str, set[int]] = {}
    for position, (path, text) in enumerate(files):
        if position % 3 == 0:
            total = text.count("\n")
            added[path] = set(range(total // 2, total + 1))
    return added


def naive_inventory(
    files: list[tuple[str, str]],
    conventions: LevelConventions,
    added_lines: dict[str, set[int]],
) -> InventoryResult:
    """Same work, but the language, parser and queries are rebuilt for every file."""
    cases = []
    notes = []
    for path, text in sorted(files):
        if not is_test_file(path, conventions):
            continue
        reset_parser_caches()
        result = scan_test_file(path, text, conventions)
        cases.extend(result.cases)
        notes.extend(result.notes)
    return InventoryResult(
        cases=classify_feature_tests(cases, added_lines, frozenset()), notes=notes
    )


def _median_seconds(
    fn: Callable[[], InventoryResult], repeats: int
) -> tuple[float, InventoryResult]:
    times: list[float] = []
    result: InventoryResult | None = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    assert result is not None
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fifth of the repo, 3 repeats")
    parser.add_argument("--smoke", action="store_true", help="a twentieth, 1 repeat (CI)")
    args = parser.parse_args()
    scale = 20 if args.smoke else 5 if args.quick else 1
    repeats = 1 if args.smoke else 3 if args.quick else 5
    n_tests, n_lines = 2_000 // scale, 50_000 // scale
    files = generate_repository(n_tests, n_lines)
    added = synthetic_added_lines(files)
    conventions = LevelConventions()
    total_lines = sum(text.count("\n") for _, text in files)
    test_files = sum(1 for path, _ in files if is_test_file(path, conventions))
    print(
        f"== build_inventory: {len(files)} files ({test_files} test files), "
        f"{total_lines:,} lines, {n_tests:,} test functions (median of {repeats}) =="
    )

    cached_s, cached = _median_seconds(
        lambda: build_inventory(files, conventions, added_lines=added), repeats
    )
    naive_s, naive = _median_seconds(lambda: naive_inventory(files, conventions, added), repeats)
    if cached.cases != naive.cases:
        raise SystemExit("cached and naive inventories differ")

    functions = len({c.function_id for c in cached.cases})
    parametrised = len({c.function_id for c in cached.cases if c.row_index is not None})
    print(
        f"  cases {len(cached.cases):,} (functions {functions:,}, parametrised {parametrised:,}); "
        f"asserting {sum(c.asserts for c in cached.cases):,}, "
        f"mock-only {sum(c.mock_only for c in cached.cases):,}, "
        f"feature {sum(bool(c.is_feature) for c in cached.cases):,}"
    )
    verdict = "ok" if cached_s < TARGET_S / scale else "OVER TARGET"
    print(
        f"  cached parsers/queries  {cached_s * 1000:8.1f} ms  "
        f"({total_lines / cached_s:,.0f} lines/s; target < {TARGET_S / scale:.1f} s: {verdict})"
    )
    print(f"  naive (rebuild per file){naive_s * 1000:8.1f} ms")
    print(f"  ratio naive / cached    {naive_s / cached_s:8.2f}x")


if __name__ == "__main__":
    main()
