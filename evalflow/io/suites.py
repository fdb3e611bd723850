"""Suite files (which benchmarks are rated together, with what weights, under which judge),
and rating a suite from the warehouse tables.

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
      judge_prompt_version: heuristic-5

Every field of the comparability key is always required to be equal within one rating:
within a benchmark, one baseline hash; across the suite, one judge id (backend), judge model
and prompt version. The file only pins *which* values; a run with another value is left
out and named. Without a pin, runs with several values are refused (never silently mixed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evalflow.domain.ranking.suite import SUITE_SAMPLES, SuiteReport, judge_variance, rate_suite
from evalflow.domain.rollup import PRIORITY_WEIGHTS
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.io.evaluation import checks_frame
from evalflow.io.inputs import load_benchmark, load_manifest, read_yaml, validate_model

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


def check_votes(
    majority_vote: pd.DataFrame, ac_score: pd.DataFrame, run_manifest: pd.DataFrame
) -> pd.DataFrame:
    """The vote table joined to each check's AC and kind (from its run's frozen baseline)
    and its story's weight: the input of `final_uncertainty` and `judge_variance`.

    A run whose manifest or baseline cannot be read now (moved, or edited since it was
    frozen) gets no rows: its judge SD is then NULL (unmeasured), and the rating itself,
    which needs only the stored AC scores, still stands."""
    frames = []
    for manifest_path, runs in run_manifest.groupby("manifest_path", sort=True):
        try:
            loaded = load_manifest(Path(manifest_path))
            bench = load_benchmark(loaded.resolve(loaded.manifest.baseline))
        except InputError:
            continue
        checks = checks_frame(bench.baseline)[["check_id", "ac_id", "kind"]]
        votes = majority_vote[majority_vote["run_key"].isin(runs["run_key"])]
        frames.append(votes.merge(checks, on="check_id", how="inner"))
    if not frames:
        return pd.DataFrame(columns=[*majority_vote.columns, "ac_id", "kind", "weight"])
    joined = pd.concat(frames, ignore_index=True)
    stories = ac_score[["run_key", "ac_id", "story_id", "priority"]]
    joined = joined.merge(stories, on=["run_key", "ac_id"], how="inner")
    return joined.assign(weight=joined["priority"].map(PRIORITY_WEIGHTS))


def rate_from_tables(
    suite: Suite,
    leaderboard: pd.DataFrame,
    ac_score: pd.DataFrame,
    majority_vote: pd.DataFrame,
    run_manifest: pd.DataFrame,
    *,
    n_samples: int = SUITE_SAMPLES,
    seed: int = 0,
) -> SuiteReport:
    """Rate a suite from the warehouse tables (the asset and `leaderboard --suite` share it).

    Judge variance is computed for the runs that can enter (ranked, in the suite) from their
    k-run votes; a run whose votes are missing keeps a NULL judge SD."""
    in_suite = leaderboard[leaderboard["benchmark"].isin(list(suite.weights))]
    ranked = in_suite.loc[in_suite["ranked"].astype(bool), "run_key"]
    # A run keeps one result per judge: only the result the leaderboard ranked enters.
    # (A leaderboard ranked before results were kept per judge names none: one per run then.)
    judged = "judge_name" in in_suite and in_suite["judge_name"].notna().all()
    on = ["run_key", "judge_name"] if judged else ["run_key"]
    results = in_suite.loc[in_suite["ranked"].astype(bool), on]
    run_manifest, ac_score, majority_vote = (
        frame.merge(results, on=on, how="inner")[list(frame.columns)]
        for frame in (run_manifest, ac_score, majority_vote)
    )
    manifests = run_manifest[run_manifest["run_key"].isin(ranked)]
    votes = check_votes(majority_vote, ac_score, manifests)
    judge_var = judge_variance(votes) if not votes.empty else None
    scored = ac_score[ac_score["scored"].astype(bool) & ac_score["run_key"].isin(ranked)]
    return rate_suite(
        in_suite,
        scored,
        suite.weights,
        judge_var=judge_var,
        baselines={b.name: b.baseline_sha256 for b in suite.benchmarks},
        pins=suite.pinned(),
        n_samples=n_samples,
        seed=seed,
    )


def known_suites() -> list[Suite]:
    """Every suite file under `<benchmarks root>/_suites/`, by name (a bad file raises)."""
    folder = settings.benchmarks_root() / SUITES_DIR
    files = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    return [load_suite(str(path)) for path in files]
