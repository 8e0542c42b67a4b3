"""The Spark jobs of MERGE SPLITS, merge on write, PURGE and companion builds, as the Spark UI
shows them: each job's description names the operation, the table and the step
(`IndexTables MERGE SPLITS /t: merging 4 splits in 1 groups`), and the description the user set
before the command holds again after it.

The suite's session runs without a UI, so a driver of its own (built as tests/conftest.py builds
one, with the UI on a free port) runs the commands from PySpark and reads every job back
through Spark's REST API (`/api/v1/applications/<id>/jobs`, whose JobData has `description`),
as a person's browser or a monitoring tool would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import delta_oracle

TESTS_DIR = Path(__file__).resolve().parent
PATIENCE_S = 900.0

# One command per window. Before it the user sets a description of their own ("user: <name>");
# after it a job with no description of its own shows whether that one came back, then a
# separator job ("end: <name>") closes the window. The jobs in between are the command's.
_DRIVER = r"""
import json
import sys
import time
import urllib.request
from pathlib import Path

import indextables
from pyspark.sql import functions as F

tests_dir, work, with_delta = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "1"
sys.path.insert(0, tests_dir)
import delta_oracle
from helpers import session_builder

builder = session_builder(
    "indextables-job-descriptions",
    {
        "spark.ui.enabled": "true",
        "spark.ui.port": "0",
        "spark.ui.showConsoleProgress": "false",
        "spark.local.dir": str(work),
        "spark.sql.warehouse.dir": str(work / "warehouse"),
    },
)
builder = indextables.configure_spark(builder)
if with_delta:
    builder = delta_oracle.configure(builder)
spark = builder.getOrCreate()
sc = spark.sparkContext
sc.setLogLevel("WARN")
TEXT = {"spark.indextables.indexing.typemap.message": "text"}


def one_job():
    sc.parallelize([0], 1).count()


def rows(first, n):
    return spark.range(first, first + n).select(
        F.col("id"), F.concat(F.lit("event "), F.col("id").cast("string")).alias("message")
    ).coalesce(1)


def window(name, command):
    sc.setJobDescription(f"user: {name}")
    command()
    one_job()  # described "user: <name>" when the command restored it
    sc.setJobDescription(f"end: {name}")
    one_job()


tables = {k: str(work / k) for k in ("merged", "merge_on_write", "parquet", "parquet_index",
                                     "delta", "delta_index")}


def appends(path, n, options):
    for i in range(n):
        rows(i * 10, 10).write.format("indextables").mode("append").options(**options).save(path)


sc.setJobDescription("setup")
appends(tables["merged"], 4, TEXT)
window("merge", lambda: spark.sql(f"MERGE SPLITS '{tables['merged']}'").collect())
window("purge", lambda: spark.sql(f"PURGE INDEXTABLE '{tables['merged']}'").collect())

mow = {**TEXT, "spark.indextables.mergeOnWrite.enabled": "true",
       "spark.indextables.mergeOnWrite.targetSize": "100M",
       "spark.indextables.mergeOnWrite.minBatchesToTrigger": "1",
       "spark.indextables.mergeOnWrite.mergeFactor": "2"}


def merge_on_write():
    appends(tables["merge_on_write"], 3, mow)
    deadline = time.monotonic() + 300
    while True:
        jobs = [j for j in spark.sql("DESCRIBE INDEXTABLES MERGE JOBS").collect()
                if j.table_path.rstrip("/").endswith(tables["merge_on_write"])]
        if jobs and all(j.status not in ("RUNNING", "PENDING") for j in jobs):
            break
        assert time.monotonic() < deadline, jobs
        time.sleep(0.2)
    assert all(j.status == "COMPLETED" for j in jobs), jobs


window("merge-on-write", merge_on_write)

sc.setJobDescription("setup")
for i in range(3):
    rows(i * 10, 10).write.mode("append").parquet(tables["parquet"])
window("parquet", lambda: spark.sql(
    f"BUILD INDEXTABLES COMPANION FOR PARQUET '{tables['parquet']}' "
    f"AT LOCATION '{tables['parquet_index']}' INDEXING MODES (message: 'text')").collect())

def failed_build():
    try:
        spark.sql(
            f"BUILD INDEXTABLES COMPANION FOR PARQUET '{work}/no-such-source' "
            f"AT LOCATION '{work}/failed_index'").collect()
    except Exception as e:  # the build fails naming the source; the description comes back
        assert "INDEXTABLES_COMPANION_SOURCE_NOT_FOUND" in str(e), e
    else:
        raise AssertionError("a build over a missing source succeeded")


window("failed", failed_build)

if with_delta:
    sc.setJobDescription("setup")
    for i in range(3):
        rows(i * 10, 10).write.format("delta").mode("append").save(tables["delta"])
    window("delta", lambda: spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{tables['delta']}' "
        f"AT LOCATION '{tables['delta_index']}' INDEXING MODES (message: 'text')").collect())

sc.setJobDescription("end: all")
one_job()
api = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/jobs"
deadline = time.monotonic() + 60
while True:
    with urllib.request.urlopen(api) as answer:
        jobs = json.load(answer)
    done = [j for j in jobs if j.get("description") == "end: all" and j["status"] != "RUNNING"]
    if done and all(j["status"] != "RUNNING" for j in jobs):
        break
    assert time.monotonic() < deadline, jobs
    time.sleep(0.2)
with urllib.request.urlopen(api.replace("/jobs", "/sql?details=false&length=10000")) as answer:
    executions = json.load(answer)
print("JOBS " + json.dumps({"tables": tables, "jobs": jobs, "sql": executions}), flush=True)
spark.stop()
"""


@pytest.fixture(scope="module")
def ui_jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every job of a driver that ran the commands, from its REST API, and its tables' paths."""
    work = tmp_path_factory.mktemp("job-descriptions")
    with_delta = "1" if delta_oracle.is_installed() else "0"
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(TESTS_DIR), str(work), with_delta],
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("JOBS ")]
    assert done.returncode == 0 and lines, done.stdout[-4000:] + done.stderr[-8000:]
    result: dict[str, Any] = json.loads(lines[-1][len("JOBS ") :])
    return result


def _description(job: dict[str, Any]) -> str:
    return str(job.get("description") or f"(none; call site {job['name']})")


def _window(ui_jobs: dict[str, Any], name: str) -> tuple[list[str], str]:
    """The descriptions of the jobs a command ran (in order), and that of the job after it."""
    jobs = sorted(ui_jobs["jobs"], key=lambda j: int(j["jobId"]))
    ends = [i for i, j in enumerate(jobs) if _description(j).startswith("end: ")]
    (end,) = [i for i in ends if _description(jobs[i]) == f"end: {name}"]
    start = max([i for i in ends if i < end], default=-1) + 1
    # A merge on write runs on a thread of its own, whenever it starts: it is checked apart.
    inside = [
        _description(j)
        for j in jobs[start : end - 1]
        if "MERGE ON WRITE" not in _description(j) and _description(j) != "setup"
    ]
    return inside, _description(jobs[end - 1])


def test_merge_splits_jobs_name_the_table_and_step_and_restore_the_users_description(
    ui_jobs: dict[str, Any],
) -> None:
    table = ui_jobs["tables"]["merged"]
    inside, after = _window(ui_jobs, "merge")
    assert inside, "MERGE SPLITS ran no Spark job"
    assert all(
        d.startswith(f"IndexTables MERGE SPLITS file:{table}: merging 4 splits in 1 group")
        for d in inside
    ), inside
    assert after == "user: merge"


def test_merge_on_write_jobs_are_described_on_their_own_thread(ui_jobs: dict[str, Any]) -> None:
    table = ui_jobs["tables"]["merge_on_write"]
    merges = [_description(j) for j in ui_jobs["jobs"] if "MERGE ON WRITE" in _description(j)]
    # Each merge on write names its table and step, never the description of the writer's
    # thread it was started from ("user: merge-on-write"), which its thread inherited.
    assert merges, [_description(j) for j in ui_jobs["jobs"]]
    assert all(
        d.startswith(f"IndexTables MERGE ON WRITE file:{table}: merging ") for d in merges
    ), merges
    inside, after = _window(ui_jobs, "merge-on-write")
    assert after == "user: merge-on-write"


def test_merge_on_write_jobs_belong_to_no_sql_execution(ui_jobs: dict[str, Any]) -> None:
    # Regression: the merge's thread inherited the SQL execution id of the write whose commit
    # created it, so the SQL tab listed the merge's jobs under that finished write.
    merges = {int(j["jobId"]) for j in ui_jobs["jobs"] if "MERGE ON WRITE" in _description(j)}
    listed = {
        (e["id"], job)
        for e in ui_jobs["sql"]
        for key in ("runningJobIds", "successJobIds", "failedJobIds")
        for job in e.get(key, [])
        if job in merges
    }
    assert merges and not listed, listed


def test_purge_runs_no_spark_job(ui_jobs: dict[str, Any]) -> None:
    # PURGE lists and deletes from the driver through the table's LogStore: it has no job to
    # describe. A job added to it must be described as the others are (and this test changed).
    inside, after = _window(ui_jobs, "purge")
    assert inside == []
    assert after == "user: purge"


def test_companion_build_over_parquet_names_source_index_and_step(
    ui_jobs: dict[str, Any],
) -> None:
    source, index = ui_jobs["tables"]["parquet"], ui_jobs["tables"]["parquet_index"]
    inside, after = _window(ui_jobs, "parquet")
    head = f"IndexTables BUILD COMPANION FOR PARQUET file:{source} AT file:{index}: "
    assert inside and all(d.startswith(head) for d in inside), inside
    assert any(
        re.fullmatch(re.escape(head) + "indexing 3 Parquet files into [12] splits?", d)
        for d in inside
    )
    assert after == "user: parquet"


def test_a_failed_build_restores_the_users_description(ui_jobs: dict[str, Any]) -> None:
    inside, after = _window(ui_jobs, "failed")
    assert inside == []
    assert after == "user: failed"


def test_companion_build_over_delta_names_source_index_and_step(ui_jobs: dict[str, Any]) -> None:
    if "delta" not in {_description(j).removeprefix("end: ") for j in ui_jobs["jobs"]}:
        pytest.skip("Delta Lake's JARs are not in target/oracle-jars (build/package.sh)")
    source, index = ui_jobs["tables"]["delta"], ui_jobs["tables"]["delta_index"]
    inside, after = _window(ui_jobs, "delta")
    head = f"IndexTables BUILD COMPANION FOR DELTA file:{source} AT file:{index}: "
    # Delta names its own jobs under the description it finds (its withJobDescription):
    # " <ours>: Delta: <its step>".
    assert inside and all(d.strip().startswith(head) for d in inside), inside
    assert any(d.strip().startswith(f"{head}listing the source") for d in inside), inside
    assert any(
        re.fullmatch(re.escape(head) + "indexing 3 Parquet files into [12] splits?", d)
        for d in inside
    )
    assert after == "user: delta"
