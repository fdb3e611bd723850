"""Reading a run's inputs from disk: manifest, PRD, frozen baseline, benchmark settings.

Every reader turns a missing file, bad YAML or a schema violation into one `InputError`
naming the file (and line where YAML knows it) and the fix. Relative paths inside a manifest
resolve against the manifest's own directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from evalflow.domain.baseline import baseline_sha256, error_location, validate_baseline
from evalflow.domain.models import PRD, Baseline, GateSettings, RunManifest
from evalflow.domain.prd import parse_prd
from evalflow.errors import InputError
from evalflow.gates.sandbox import GateLimits

M = TypeVar("M", bound=BaseModel)


def read_text(path: Path, what: str) -> str:
    if not path.is_file():
        raise InputError(f"{what} not found", where=str(path), fix=f"check the {what} path")
    data = path.read_bytes()
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not UTF-8 text (byte {exc.start})",
            where=str(path),
            fix="save the file as UTF-8",
        ) from exc


def read_yaml(path: Path, what: str) -> Any:
    text = read_text(path, what)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"invalid YAML in {what}: {problem}", where=where) from exc


def validate_model(model: type[M], data: Any, path: Path, what: str) -> M:
    if not isinstance(data, dict):
        raise InputError(f"{what} must be a YAML mapping", where=str(path))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = error_location(data, err["loc"])
        raise InputError(
            f"invalid {what}: {loc}: {err['msg']}",
            where=str(path),
            fix=f"fix '{loc}' ({len(exc.errors())} problem(s) in total)",
        ) from exc


@dataclass(frozen=True)
class LoadedManifest:
    manifest: RunManifest
    path: Path

    def resolve(self, value: str) -> Path:
        return (self.path.parent / value).resolve()


def check_gate_settings(settings: GateSettings, path: Path, what: str) -> GateSettings:
    """`gate_limits` must name GateLimits fields with valid values (checked where read)."""
    validate_model(GateSettings, settings.model_dump(), path, what)
    try:
        GateLimits.model_validate({k: v for k, v in settings.gate_limits.items() if v is not None})
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise InputError(
            f"invalid {what}: gate_limits.{loc}: {err['msg']}",
            where=str(path),
            fix="use GateLimits fields (see docs/configuration.md, Gates)",
        ) from exc
    return settings


def load_manifest(path: Path) -> LoadedManifest:
    data = read_yaml(path, "run manifest")
    manifest = validate_model(RunManifest, data, path, "run manifest")
    check_gate_settings(manifest.gate_settings, path, "run manifest")
    return LoadedManifest(manifest, path.resolve())


@dataclass(frozen=True)
class Benchmark:
    prd: PRD
    prd_text: str
    baseline: Baseline
    baseline_sha256: str
    baseline_path: Path
    gate_defaults: GateSettings = field(default_factory=GateSettings)


BENCHMARK_SETTINGS = "_benchmark.yaml"


def load_gate_defaults(benchmark_dir: Path) -> GateSettings:
    """The benchmark's gate defaults from `_benchmark.yaml` (none when the file is absent).

    Kept apart from the frozen baseline: setting up dependencies changes no verdict, so it
    must not force a re-freeze.
    """
    path = benchmark_dir / BENCHMARK_SETTINGS
    if not path.is_file():
        return GateSettings()
    what = "benchmark settings"
    settings = validate_model(GateSettings, read_yaml(path, what), path, what)
    return check_gate_settings(settings, path, what)


def lock_path(baseline_path: Path) -> Path:
    """`_ac-baseline.lock`: the sha256 recorded by `evalflow baseline freeze`."""
    return baseline_path.with_suffix(".lock")


def load_benchmark(baseline_path: Path) -> Benchmark:
    """The frozen baseline and its PRD, validated against each other and against the lock."""
    baseline = validate_model(
        Baseline, read_yaml(baseline_path, "baseline"), baseline_path, "baseline"
    )
    prd_path = (baseline_path.parent / baseline.prd).resolve()
    prd_text = read_text(prd_path, "PRD")
    prd = parse_prd(prd_text, str(prd_path), priority_mapping=baseline.priority_map)
    validate_baseline(baseline, prd, where=str(baseline_path))
    sha = baseline_sha256(baseline)
    lock = lock_path(baseline_path)
    if lock.is_file() and lock.read_text().strip() != sha:
        raise InputError(
            "baseline changed since it was frozen (its sha256 differs from the lock)",
            where=str(baseline_path),
            fix="revert the edit, or re-freeze (evalflow baseline freeze --force) and re-score "
            "every run of this benchmark",
        )
    defaults = load_gate_defaults(baseline_path.parent)
    return Benchmark(prd, prd_text, baseline, sha, baseline_path.resolve(), defaults)
