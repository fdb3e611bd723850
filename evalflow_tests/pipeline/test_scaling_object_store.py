"""docs/scaling.md section 3, verified: the warehouse on an S3-compatible object store.

A local `moto` S3 server on loopback stands in for S3. Two runs of the mini benchmark are
registered and materialised with `EVALFLOW_WAREHOUSE=s3://…` (credentials and endpoint in the
usual AWS variables); `evalflow query` reads them back from the object store, equal to the same
runs materialised into a local warehouse, and pyarrow reads the Parquet parts straight from the
bucket. DuckDB's own `httpfs` reader is not exercised: DuckDB downloads that extension from
extensions.duckdb.org, which CI cannot reach, so on such a host the catalog file is skipped with
one line saying what to install (asserted here) while `query` reads the object store through
pyarrow. Needs `moto[server]` in the recipes' interpreter (`EVALFLOW_PG_PYTHON`, conftest.py);
skips, saying why, without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalflow_tests.pipeline.conftest import (
    EVALFLOW,
    PYTHON,
    free_port,
    require_module,
    run,
    stored_results,
)

BUCKET = "evalflow"
CREATE_BUCKET = f"import boto3; boto3.client('s3').create_bucket(Bucket='{BUCKET}')"
# The parts as pyarrow sees them in the bucket: run keys of final_score, read from S3.
READ_PARTS = f"""
import json, pyarrow.dataset as ds, pyarrow.fs as fs
s3, path = fs.FileSystem.from_uri("s3://{BUCKET}/wh/final_score")
table = ds.dataset(path, filesystem=s3, format="parquet", partitioning="hive").to_table()
print(json.dumps(sorted(table.column("run_key").to_pylist())))
"""

pytestmark = pytest.mark.slow  # two materialisations of two runs each: ~2-5 min


@pytest.fixture
def s3_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A moto S3 server on loopback with one bucket; yields the environment that reaches it."""
    require_module("moto.server")
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
    }
    try:
        for _ in range(120):  # the server takes a moment to listen
            done = subprocess.run(
                [PYTHON, "-c", CREATE_BUCKET], env=env, capture_output=True, check=False, timeout=60
            )
            if done.returncode == 0:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the moto server did not answer: {done.stderr.decode()[-500:]}")
        yield env
    finally:
        server.terminate()
        server.wait(timeout=60)


def test_an_object_store_warehouse_equals_a_local_one(
    s3_env: dict[str, str], mini: Path, tmp_path: Path
) -> None:
    manifests = [str(mini / "runs" / f"{name}.yaml") for name in ("good", "partial")]
    remote = {
        **s3_env,
        "EVALFLOW_WAREHOUSE": f"s3://{BUCKET}/wh",
        "EVALFLOW_WORKDIR": str(tmp_path / "work"),
    }
    local = {**os.environ, "EVALFLOW_WAREHOUSE": str(tmp_path / "local")}
    for env in (remote, local):  # each warehouse keeps its own instance under its workdir
        env.pop("DAGSTER_HOME", None)
        run([*EVALFLOW, "register", *manifests], env)
    done = run([*EVALFLOW, "materialize", "--json"], remote)
    outcomes = {o["partition"]: o for o in json.loads(done.stdout)}
    assert all(o["success"] for o in outcomes.values()), outcomes
    catalog = outcomes.get("catalog")
    if catalog is not None:  # a host without DuckDB's httpfs: one line, the tables stored
        assert "INSTALL httpfs" in catalog["error"], catalog
    run([*EVALFLOW, "materialize"], local)

    expected = stored_results(local)
    assert expected["final_score"], "the local warehouse stored no final_score"
    assert stored_results(remote) == expected
    parts = run([PYTHON, "-c", READ_PARTS], remote).stdout
    assert json.loads(parts) == sorted(row["run_key"] for row in expected["final_score"])
    assert not (tmp_path / "work" / "final_score").exists(), "tables were written locally"
