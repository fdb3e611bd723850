"""Suite files: which benchmarks are rated together, with what weights, under which judge.

A suite lives at `<benchmarks root>/_suites/<name>.yaml` (`settings.benchmarks_root()`), or
is given as a path to a YAML file:

    name: demo
    benchmarks:
      - trialist                 # weight 1
      - name: ledger_app
        weight: 2                # its matches and Finals count twice
        baseline_sha256: 9f…     # optional pin: runs scored against another baseline are left out
    comparability:               # optional pins of the judge part of the comparability key
      judge_id: heuristic
      judge_model: null
      judge_prompt_version: heuristic-4

Every field of the comparability key is always required to be equal within one rating:
within a benchmark, one baseline hash; across the suite, one judge id (backend), judge model
and prompt version. The file only pins *which* values; a run with another value is left
out and named. Without a pin, runs with several values are refused (never silently mixed).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evalflow import settings
from evalflow.errors import InputError
from evalflow.inputs import read_yaml, validate_model

SUITES_DIR = "_suites"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class SuiteBenchmark(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(description="a benchmark directory under the benchmarks root")
    weight: float = Field(default=1.0, gt=0, description="how much its matches and Finals count")
    baseline_sha256: str | None = Field(
        default=None, description="pin: only runs scored against this frozen baseline enter"
    )

    @field_validator("weight", mode="before")
    @classmethod
    def _number(cls, value: object) -> object:
        # strict mode refuses the int 2 for a float field; a whole number is a fine weight.
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class SuiteComparability(BaseModel):
    """Pins of the judge part of the comparability key (an absent field is not pinned)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    judge_id: str | None = None
    judge_model: str | None = None
    judge_prompt_version: str | None = None


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    benchmarks: list[SuiteBenchmark] = Field(min_length=1)
    comparability: SuiteComparability | None = None

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _short_form(cls, value: object) -> object:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _unique(self) -> Suite:
        if not _NAME.match(self.name):
            raise ValueError(f"suite name {self.name!r} must be letters, digits, _ . -")
        names = [b.name for b in self.benchmarks]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"benchmark listed twice: {', '.join(repeated)}")
        return self

    def pinned(self) -> dict[str, str | None]:
        """The judge key fields the file pins (explicit `null` pins a null model)."""
        if self.comparability is None:
            return {}
        return self.comparability.model_dump(exclude_unset=True)

    @property
    def weights(self) -> dict[str, float]:
        return {b.name: b.weight for b in self.benchmarks}


def suite_path(name_or_path: str) -> Path:
    """A path to a YAML file as given, else `<benchmarks root>/_suites/<name>.yaml`."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        return candidate
    if not _NAME.match(name_or_path):
        raise InputError(
            f"suite name {name_or_path!r} is not a name or a .yaml path",
            fix="pass a suite name (letters, digits, _ . -) or a path to its YAML file",
        )
    return settings.benchmarks_root() / SUITES_DIR / f"{name_or_path}.yaml"


def load_suite(name_or_path: str) -> Suite:
    """Read and validate a suite file (one-line InputError on any problem)."""
    path = suite_path(name_or_path)
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml")) if path.parent.is_dir() else []
        raise InputError(
            "suite file not found",
            where=str(path),
            fix=f"known suites: {', '.join(known)}" if known else f"create {path}",
        )
    return validate_model(Suite, read_yaml(path, "suite file"), path, "suite file")
