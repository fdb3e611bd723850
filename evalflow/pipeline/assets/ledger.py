"""Asset `ledger_entry`: the evaluation ledger (JSONL) as a DuckDB-friendly table.

Every evaluation — framework run, judge calibration, plugin score, retrieval evaluation —
appends a line to `<warehouse>/ledger/ledger.jsonl`; this asset flattens it (one row per entry
× dimension score, the entry's scores as JSON) whenever cross-run tables are refreshed.
"""

import dagster as dg
import pandas as pd

from evalflow.io.ledger import LEDGER_COLUMNS, ledger_path_for, load_rubric, read_ledger_frame
from evalflow.pipeline.assets.common import IO, KINDS, table_metadata
from evalflow.pipeline.resources import EvalflowResource


@dg.asset(io_manager_key=IO, group_name="ledger", kinds=KINDS)
def ledger_entry(evalflow: EvalflowResource) -> dg.Output[pd.DataFrame]:
    """One row per ledger entry × dimension score; `evalflow ledger compare` reads the file."""
    path = ledger_path_for(evalflow.get_warehouse().workdir)
    if path.is_file():
        frame = read_ledger_frame(path, load_rubric())
    else:
        frame = pd.DataFrame(columns=list(LEDGER_COLUMNS))
    return dg.Output(frame, metadata=table_metadata("ledger_entry", frame))
