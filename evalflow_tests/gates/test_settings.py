"""Gate settings where they are read: run manifest keys and the benchmark's `_benchmark.yaml`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from evalflow.domain.models import GateSettings
from evalflow.errors import InputError
from evalflow.gates import gate_limits
from evalflow.io.inputs import BENCHMARK_SETTINGS, load_gate_defaults, load_manifest

MANIFEST = {
    "benchmark": "b",
    "framework": "f",
    "run": "r1",
    "repo": ".",
    "base": "base",
    "head": "head",
}


def _write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_benchmark_defaults_are_optional_and_validated(tmp_path: Path) -> None:
    assert load_gate_defaults(tmp_path) == GateSettings()
    _write(
        tmp_path / BENCHMARK_SETTINGS,
        {"setup": "auto", "gate_env": {"CI": "1"}, "gate_limits": {"timeout_s": 900}},
    )
    defaults = load_gate_defaults(tmp_path)
    assert defaults.setup == "auto"
    assert defaults.gate_env == {"CI": "1"}
    assert gate_limits(defaults).timeout_s == 900


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"gate_limits": {"memory_bytes": -1}}, "gate_limits.memory_bytes"),
        ({"gate_limits": {"no_such_limit": 1}}, "gate_limits.no_such_limit"),
        ({"setup": []}, "setup"),
        ({"gate_env": {"NOT-A-NAME": "x"}}, "gate_env"),
        ({"stray": 1}, "stray"),
    ],
)
def test_bad_benchmark_settings_are_one_line_errors(
    tmp_path: Path, data: dict, message: str
) -> None:
    _write(tmp_path / BENCHMARK_SETTINGS, data)
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        load_gate_defaults(tmp_path)
    assert "\n" not in str(caught.value)
    assert str(tmp_path / BENCHMARK_SETTINGS) in str(caught.value)


def test_manifest_gate_keys(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "run.yaml",
        {
            **MANIFEST,
            "setup": ["npm ci", "npm run prepare"],
            "gate_env": {"NODE_OPTIONS": "--max-old-space-size=4096", "LANG": None},
            "gate_limits": {"memory_bytes": 12 << 30},
            "require_isolation": True,
        },
    )
    settings = load_manifest(path).manifest.gate_settings
    assert settings.setup == ("npm ci", "npm run prepare")
    assert settings.gate_env["LANG"] is None
    assert settings.require_isolation is True
    limits = gate_limits(settings.over(GateSettings(gate_limits={"timeout_s": 60})), 600)
    assert (limits.memory_bytes, limits.timeout_s) == (12 << 30, 60)
    assert gate_limits(settings, 600).timeout_s == 600


def test_manifest_with_bad_limits_fails_where_it_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.yaml", {**MANIFEST, "gate_limits": {"timeout_s": 0}})
    with pytest.raises(InputError, match=r"gate_limits\.timeout_s"):
        load_manifest(path)
