"""Row-level statements that do not finish: an UPDATE killed with SIGKILL (its own driver
process, the JVM with it) after it has written new splits but before it commits leaves the table
at its previous version, readable and unchanged, and the next statement succeeds. Every
statement is a user's, with real Spark sessions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from helpers import TEXT, TYPEMAP, assert_same_rows, read_table, split_files, write_table
from test_overwrite_failures import PATIENCE_S, _group_alive, _wait_until

pytestmark = pytest.mark.usefixtures("layout")

TESTS_DIR = Path(__file__).resolve().parent

# The killed statement's driver: its session built as tests/conftest.py builds it. It warms up
# (a small write, which loads the plugin and its native library), prints READY, waits for the
# file `go` in its work folder, prints RUNNING and runs the statement, and prints DONE if nobody
# kills it first.
KILLED_STATEMENT = r"""
import sys
import time
from pathlib import Path

import indextables

tests_dir, layout, statement, work = sys.argv[1:]
sys.path.insert(0, tests_dir)
from helpers import session_builder

builder = session_builder(
    "indextables-killed-statement",
    {
        "spark.local.dir": work,
        "spark.driver.extraJavaOptions": f"-Djava.io.tmpdir={work}",
        "spark.indextables.write.layout": layout,
        "spark.indextables.maxRowsPerSplit": "10000",
    },
)
spark = indextables.configure_spark(builder).getOrCreate()
spark.sparkContext.setLogLevel("WARN")
spark.range(0, 100).write.format("indextables").save(f"{work}/warm-up")
print("READY", flush=True)
go, deadline = Path(work) / "go", time.monotonic() + 300
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("nobody said go")
    time.sleep(0.01)
print("RUNNING", flush=True)
spark.sql(statement).collect()
print("DONE", flush=True)
"""


def test_kill_9_during_an_update_leaves_the_previous_version(
    spark: SparkSession, layout: str, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    work = tmp_path / "killed"
    work.mkdir()
    script = work / "statement.py"
    script.write_text(KILLED_STATEMENT)
    # Every row updated: 300,000 rows written again as new splits (of 10,000 rows, one by one)
    # before the one commit.
    statement = f"UPDATE indextables.`{path}` SET msg = concat(msg, ' updated') WHERE n >= 0"
    out = work / "out.txt"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(TESTS_DIR), layout, statement, str(work)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def said(word: str) -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the statement ended unkilled:\n{out.read_text()}")
        return word in out.read_text(errors="replace")

    try:
        rows = spark.range(0, 300_000, numPartitions=2).select(
            F.col("id"),
            (F.col("id") % 1000).cast("int").alias("n"),
            F.concat(F.lit("event "), F.col("id").cast("string")).alias("msg"),
        )
        write_table(
            rows,
            path,
            options={TYPEMAP + "msg": TEXT, "spark.indextables.maxRowsPerSplit": "10000"},
        )
        before = set(split_files(path))
        _wait_until(lambda: said("READY"), "the statement's session to start")
        (work / "go").touch()
        _wait_until(lambda: said("RUNNING"), "the statement to start")
        # Killed once the update has written new splits, before its commit.
        _wait_until(
            lambda: said("RUNNING") and len(set(split_files(path)) - before) >= 2,
            "the update to write new splits",
        )
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=PATIENCE_S)
        _wait_until(lambda: not _group_alive(proc.pid), "the killed statement's processes")
        assert proc.returncode == -signal.SIGKILL and "DONE" not in out.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)

    # The table is still its first version, whole and unchanged.
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    assert state.version == 0 and state.num_deletion_vectors == 0
    assert_same_rows(read_table(spark, path), rows)
    # The next statement succeeds, and answers as it should.
    (done,) = spark.sql(f"UPDATE indextables.`{path}` SET msg = 'x' WHERE n = 7").collect()
    assert done.num_affected_rows == 300
    expected = rows.withColumn("msg", F.when(F.col("n") == 7, F.lit("x")).otherwise(F.col("msg")))
    assert_same_rows(read_table(spark, path), expected)
