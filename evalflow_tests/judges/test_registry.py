"""The judge registry's names agree with its factories, without importing the judges."""

from __future__ import annotations

import subprocess
import sys

from evalflow.judges import panel, registry


def test_every_judge_name_has_a_factory_and_every_factory_a_name() -> None:
    assert set(registry._FACTORIES) == set(registry.JUDGE_NAMES)
    assert len(registry.JUDGE_NAMES) == len(set(registry.JUDGE_NAMES))


def test_the_panel_prefix_is_the_panel_modules() -> None:
    assert registry.PANEL_PREFIX == panel.PANEL_PREFIX


def test_importing_the_registry_imports_no_judge() -> None:
    code = (
        "import sys, evalflow.judges.registry; "
        "print(sorted(m for m in sys.modules if m.startswith('evalflow.judges.') "
        "or m in ('pandas', 'evalflow.domain.models')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "['evalflow.judges.registry']"
