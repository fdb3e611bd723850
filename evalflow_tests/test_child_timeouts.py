"""No test can hang on a child process: every `subprocess` call in the tests has a timeout,
and pytest has a global per-test timeout (pyproject's `timeout`, tighter in `make test`)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# The calls that wait for a child to finish; a Popen is waited on by one of these methods.
WAITING = {"run", "call", "check_call", "check_output"}


def _calls_without_timeout(path: Path) -> list[int]:
    """Line numbers of the `subprocess` calls in `path` that wait without a timeout."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    missing = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        waits = isinstance(owner, ast.Name) and owner.id == "subprocess"
        if (
            waits
            and node.func.attr in WAITING
            and not any(k.arg == "timeout" for k in node.keywords)
        ):
            missing.append(node.lineno)
    return missing


def test_every_subprocess_call_in_the_tests_has_a_timeout() -> None:
    missing = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in _calls_without_timeout(path)
    ]
    assert missing == []


def test_a_call_without_timeout_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import subprocess\nsubprocess.run(['git', 'status'], check=False)\n")
    assert _calls_without_timeout(probe) == [2]
    probe.write_text("import subprocess\nsubprocess.run(['git'], check=False, timeout=60)\n")
    assert _calls_without_timeout(probe) == []


def test_pytest_and_make_test_have_a_global_timeout() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["pytest"]["ini_options"]["timeout"] > 0
    make_test = re.search(r"^test:.*?(?=^\S)", (ROOT / "Makefile").read_text(), re.M | re.S)
    assert make_test is not None and re.search(r"pytest .*--timeout=\d+", make_test.group(0))
