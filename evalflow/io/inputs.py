"""Reading a run's inputs from disk: manifest, PRD, frozen baseline, benchmark settings.

Every reader turns a missing file, bad YAML or a schema violation into one `InputError`
naming the file (and line where YAML knows it) and the fix. Relative paths inside a manifest
resolve against the manifest's own directory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from evalflow.domain.baseline import baseline_sha256, error_location, validate_baseline
from evalflow.domain.models import PRD, Baseline, GateSettings, RunManifest
from evalflow.domain.prd import parse_prd
from evalflow.domain.yaml_text import load_yaml
from evalflow.errors import InputError
from evalflow.gates.sandbox import GateLimits
from evalflow.judges.registry import check_judge_name

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
        return load_yaml(text)
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
    """`gate_limits` must name GateLimits fields with valid, finite values and `gate_env`
    values must be passable to a process (checked where read)."""
    validate_model(GateSettings, settings.model_dump(), path, what)
    for name, value in settings.gate_limits.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                f"invalid {what}: gate_limits.{name} is {value} (not a finite number)",
                where=str(path),
                fix=f"give gate_limits.{name} a finite number, or null for the default",
            )
    for name, env_value in settings.gate_env.items():
        if env_value is not None and "\0" in env_value:
            raise InputError(
                f"invalid {what}: gate_env.{name} holds a NUL byte (no process can receive it)",
                where=str(path),
                fix=f"remove the NUL byte from gate_env.{name}",
            )
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


# benchmark, framework and run make the run_key, a component of warehouse paths (a file name
# is at most 255 bytes; a table part adds its own prefix and suffix).
MAX_KEY_PART = 64


def load_manifest(path: Path) -> LoadedManifest:
    data = read_yaml(path, "run manifest")
    manifest = validate_model(RunManifest, data, path, "run manifest")
    # The gate keys' own rules (a variable name, a non-empty setup) live on GateSettings.
    gate_keys = {key: data[key] for key in GateSettings.model_fields if key in data}
    validate_model(GateSettings, gate_keys, path, "run manifest")
    check_gate_settings(manifest.gate_settings, path, "run manifest")
    for key in ("benchmark", "framework", "run"):
        if len(getattr(manifest, key)) > MAX_KEY_PART:
            raise InputError(
                f"invalid run manifest: {key} is {len(getattr(manifest, key))} characters long "
                f"(it becomes part of file names; at most {MAX_KEY_PART})",
                where=str(path),
                fix=f"shorten '{key}'",
            )
    cost = manifest.framework_cost_usd
    if cost is not None and not math.isfinite(cost):
        raise InputError(
            f"invalid run manifest: framework_cost_usd is {cost} (not a finite number)",
            where=str(path),
            fix="give the framework run's cost in USD (e.g. 1.25), or leave it out",
        )
    if manifest.judge is not None:
        try:
            check_judge_name(manifest.judge)
        except InputError as exc:
            raise InputError(
                f"run manifest: judge: {exc.what}", where=str(path), fix=exc.fix
            ) from None
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
