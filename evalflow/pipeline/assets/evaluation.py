"""Multi-asset `evaluation`: every per-run asset of one framework run, in one Dagster step.

Each stage is a function of its own module (`run_manifest`, `diff_surface`, `gates`, …,
`report`) whose parameters name the tables it reads; the step runs the stages in order and
its asset checks right after the stage that writes their asset. Every table stays an asset of
its own: its warehouse part, its data version (the run's fingerprint), its metadata, and its
lineage (each spec's deps are the tables its stage reads). One step instead of one per stage,
because Dagster's bookkeeping of a step, not the stage's work, was most of a first
evaluation's CPU: its start and success events, two events and a data-version lookup per
input, an IO-manager load and store per table (docs/performance.md, "CPU per framework run").

The step writes its tables itself (`_RunTables`; the IO manager only loads them for the
cross-run assets) and a stage reads a table as stored: what a stage before it just wrote, or,
in a subset (the stale assets of a run: `freshness`), a table the run does not rewrite
because it is fresh. Only the stages with a selected output run. A blocking check that fails
stops every stage downstream of its asset (the others still run), and Dagster then fails the
step, so the run fails with the check's description.
"""

import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from inspect import signature

import dagster as dg
import pandas as pd

from evalflow.pipeline.assets.acceptance import acceptance_runs
from evalflow.pipeline.assets.checks import CHECKS, Check
from evalflow.pipeline.assets.common import CODE_VERSION, GROUP, IO, KINDS
from evalflow.pipeline.assets.diff_surface import diff_surface
from evalflow.pipeline.assets.gates import gates
from evalflow.pipeline.assets.majority_vote import majority_vote
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.assets.plugins import PLUGIN_TABLES, plugineval
from evalflow.pipeline.assets.report import REPORT_TABLE, report
from evalflow.pipeline.assets.rollup import ROLLUP_TABLES, rollup
from evalflow.pipeline.assets.run_manifest import run_manifest
from evalflow.pipeline.assets.scoring import scoring_runs
from evalflow.pipeline.assets.side_metrics import SIDE_METRICS_OUTPUTS, side_metrics
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.tables import TABLES

# Checks on partitioned assets need `partitions_def`, a Dagster preview feature; without it a
# check of one run would be evaluated against the asset as a whole. The warning is silenced
# because it is printed on every import; docs/scaling.md ("Dagster preview and beta features")
# says why the feature is used and what upgrading Dagster must re-check.
warnings.filterwarnings("ignore", category=dg.PreviewWarning, message=".*partitions_def.*")

# The parameters of a stage or check that are not tables.
RESOURCES = ("context", "evalflow")


@dataclass(frozen=True)
class Stage:
    """`compute` writes `tables` (its outputs, in order); `also_reads`: tables it reads
    through the prepared run rather than as a parameter (lineage only)."""

    compute: Callable[..., dg.Output | Iterable[dg.Output]]
    tables: tuple[str, ...]
    also_reads: tuple[str, ...] = ()

    @property
    def reads(self) -> list[str]:
        return _reads(self.compute)


def _reads(compute: Callable) -> list[str]:
    """The tables a stage or check reads: its parameters but the resources."""
    return [p for p in signature(compute).parameters if p not in RESOURCES]


# In dependency order: each stage reads only tables of the stages before it.
STAGES = (
    Stage(run_manifest, ("run_manifest",)),
    Stage(diff_surface, ("diff_surface",)),
    Stage(gates, ("gates",)),
    Stage(acceptance_runs, ("acceptance_runs",)),
    *(
        Stage(scoring, (f"scoring_run_{run}",), also_reads=("diff_surface",))
        for run, scoring in enumerate(scoring_runs, start=1)
    ),
    Stage(majority_vote, ("majority_vote",)),
    Stage(rollup, ROLLUP_TABLES),
    Stage(side_metrics, SIDE_METRICS_OUTPUTS),
    Stage(plugineval, PLUGIN_TABLES),
    Stage(report, (REPORT_TABLE,)),
)


def _specs() -> list[dg.AssetSpec]:
    return [
        dg.AssetSpec(
            table,
            deps=[*stage.reads, *stage.also_reads],
            # Each asset is described by its table contract, so the UI and docs/tables.md agree.
            description=TABLES[table].description,
            group_name=GROUP,
            code_version=CODE_VERSION,
            kinds=KINDS,
        ).with_io_manager_key(IO)
        for stage in STAGES
        for table in stage.tables
    ]


def _check_spec(check: Check) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        check.name,
        asset=check.asset,
        description=check.description,
        blocking=check.blocking,
        additional_deps=[t for t in _reads(check.compute) if t != check.asset],
        partitions_def=evaluations,
    )


class _RunTables:
    """The run's warehouse parts, as its stages write and read them: for a judge-dependent
    table, the part of the run's judge (`EvalflowResource.judge_for`), beside other judges'."""

    def __init__(self, context: dg.AssetExecutionContext, evalflow: EvalflowResource) -> None:
        self.context = context
        self.evalflow = evalflow
        self.warehouse = evalflow.get_warehouse()
        self._read: dict[str, pd.DataFrame] = {}
        self._judge: str | None = None

    def _judge_of(self, table: str) -> str | None:
        if not TABLES[table].per_judge:
            return None
        if self._judge is None:
            self._judge = self.evalflow.judge_for(self.context.partition_key)
        return self._judge

    def read(self, table: str) -> pd.DataFrame:
        """The stored part, read once: a stage sees the types the warehouse gives back."""
        if table not in self._read:
            key = self.context.partition_key
            self._read[table] = self.warehouse.read(table, key, self._judge_of(table))
        return self._read[table]

    def write(self, output: dg.Output) -> dg.MaterializeResult:
        """Store a stage's output; its materialisation keeps the output's data version and
        metadata, and says where the part is."""
        table, frame = output.output_name, output.value
        path = self.warehouse.write(table, frame, self.context.partition_key, self._judge_of(table))
        return dg.MaterializeResult(
            asset_key=table,
            data_version=output.data_version,
            metadata={**output.metadata, "path": dg.MetadataValue.path(path), "rows": len(frame)},
        )

    def call(self, compute: Callable, /) -> object:
        given = {"context": self.context, "evalflow": self.evalflow}
        return compute(
            **{p: given[p] if p in given else self.read(p) for p in signature(compute).parameters}
        )


@dg.multi_asset(
    name="evaluation",
    specs=_specs(),
    check_specs=[_check_spec(check) for check in CHECKS],
    partitions_def=evaluations,
    can_subset=True,
    # Concurrency pool: size it to the judge API's rate limit (docs/scaling.md).
    pool="judge_api",
)
def evaluation(
    context: dg.AssetExecutionContext, evalflow: EvalflowResource
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """One framework run: manifest → diff → gates → acceptance → k scoring runs → vote →
    roll-up → side metrics → PluginEval → report, with the asset checks between."""
    selected = {key.path[-1] for key in context.selected_asset_keys}
    checks = {key.name for key in context.selected_asset_check_keys}
    tables = _RunTables(context, evalflow)
    blocked: set[str] = set()  # tables downstream of a failed blocking check
    for stage in STAGES:
        if not selected & set(stage.tables):
            continue
        if blocked & {*stage.reads, *stage.also_reads}:
            blocked.update(stage.tables)
            continue
        produced = tables.call(stage.compute)
        for output in [produced] if isinstance(produced, dg.Output) else produced:
            if output.output_name in selected:
                yield tables.write(output)
        for check in CHECKS:
            if check.asset not in stage.tables or check.name not in checks:
                continue
            result = tables.call(check.compute)
            yield result._replace(asset_key=dg.AssetKey(check.asset), check_name=check.name)
            if check.blocking and not result.passed:
                blocked.add(check.asset)
