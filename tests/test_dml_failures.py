"""Row-level statements that do not finish: an UPDATE killed with SIGKILL (its own driver
process, the JVM with it) after it has written new splits but before it commits leaves the table
at its previous version, readable and unchanged, and the next statement succeeds. Every
statement is a user's, with real Spark sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from helpers import TEXT, TYPEMAP, assert_same_rows, read_table, split_files, write_table
from killed_driver import KilledDriver

pytestmark = pytest.mark.usefixtures("layout")

# The killed statement: `statement`, in a session whose splits hold at most 10,000 rows.
KILLED_STATEMENT = """
spark.sql(args[0]).collect()
"""


def test_kill_9_during_an_update_leaves_the_previous_version(
    spark: SparkSession, layout: str, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    # Every row updated: 300,000 rows written again as new splits (of 10,000 rows, one by one)
    # before the one commit.
    statement = f"UPDATE indextables.`{path}` SET msg = concat(msg, ' updated') WHERE n >= 0"
    driver = KilledDriver(
        tmp_path / "killed",
        KILLED_STATEMENT,
        [statement],
        {"spark.indextables.write.layout": layout, "spark.indextables.maxRowsPerSplit": "10000"},
    )
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
        # Killed once the update has written new splits, before its commit.
        driver.run_until(
            lambda: len(set(split_files(path)) - before) >= 2, "the update to write new splits"
        )
    finally:
        driver.kill()

    # The table is still its first version, whole and unchanged.
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    assert state.version == 0 and state.num_deletion_vectors == 0
    assert_same_rows(read_table(spark, path), rows)
    # The next statement succeeds, and answers as it should.
    (done,) = spark.sql(f"UPDATE indextables.`{path}` SET msg = 'x' WHERE n = 7").collect()
    assert done.num_affected_rows == 300
    expected = rows.withColumn("msg", F.when(F.col("n") == 7, F.lit("x")).otherwise(F.col("msg")))
    assert_same_rows(read_table(spark, path), expected)
