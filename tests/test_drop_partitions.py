"""DROP INDEXTABLES PARTITIONS: the same rows go from the table as from a Parquet copy, in one
commit of removes, with comparisons of the partition column's type (upstream #85)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from helpers import assert_same_rows, error_text, read_table, split_files, write_table

pytestmark = pytest.mark.usefixtures("layout")


def _rows(spark: SparkSession) -> DataFrame:
    start = datetime.date(2024, 1, 1)
    return spark.range(0, 2400).select(
        F.col("id"),
        (F.col("id") % 12).cast("int").alias("hour"),
        F.date_add(F.lit(start), (F.col("id") % 5).cast("int")).alias("day"),
        F.element_at(
            F.array(*[F.lit(r) for r in ("eu", "us", "apac", "latam")]),
            (F.col("id") % 4 + 1).cast("int"),
        ).alias("region"),
        F.concat(F.lit("msg "), F.col("id").cast("string")).alias("msg"),
    )


def _history(spark: SparkSession, path: str) -> list[Row]:
    return spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").collect()


@pytest.mark.parametrize(
    ("column", "predicate", "dropped_partitions"),
    [
        # Typed: as strings, '10' and '11' are not > '9' and nothing would go.
        ("hour", "hour > 9", 2),
        ("hour", "hour >= 2 AND hour < 4 OR hour = 11", 3),
        ("day", "day >= '2024-01-04'", 2),
        ("day", "day = DATE'2024-01-01'", 1),
        ("region", "region IN ('eu', 'apac')", 2),
        ("region", "region LIKE 'la%'", 1),
    ],
)
def test_drop_partitions_matches_parquet(
    spark: SparkSession, tmp_path: Path, column: str, predicate: str, dropped_partitions: int
) -> None:
    path = str(tmp_path / "table")
    parquet = str(tmp_path / "oracle.parquet")
    rows = _rows(spark)
    write_table(rows, path, partition_by=(column,))
    rows.write.partitionBy(column).parquet(parquet)
    files_before = set(split_files(path))
    live_before = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()

    (row,) = spark.sql(f"DROP INDEXTABLES PARTITIONS FROM '{path}' WHERE {predicate}").collect()

    assert row.status == "success" and row.partitions_dropped == dropped_partitions
    expected = spark.read.parquet(parquet).filter(f"NOT ({predicate})")
    assert_same_rows(read_table(spark, path), expected)
    # One commit of removes only; the files stay for time travel until PURGE.
    history = _history(spark, path)
    assert [h.version for h in history] == [1, 0]
    assert history[0].operation == "DROP PARTITIONS"
    assert history[0].operation_parameters["predicate"] == predicate
    assert (history[0].files_added, history[0].files_removed) == (0, row.splits_removed)
    live_after = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    assert len(live_before) - len(live_after) == row.splits_removed
    assert row.total_size_bytes == sum(r.size for r in live_before) - sum(
        r.size for r in live_after
    )
    assert set(split_files(path)) == files_before
    v0 = spark.read.format("indextables").option("versionAsOf", 0).load(path)
    assert_same_rows(v0, spark.read.parquet(parquet))


def test_drop_partitions_on_two_columns_and_by_table_name(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    parquet = str(tmp_path / "oracle.parquet")
    rows = _rows(spark)
    write_table(rows, path, partition_by=("day", "region"))
    rows.write.partitionBy("day", "region").parquet(parquet)
    spark.read.format("indextables").load(path).createOrReplaceTempView("drop_view")
    predicate = "day < '2024-01-03' AND region <> 'us'"
    (row,) = spark.sql(f"drop tantivy4spark partitions from drop_view where {predicate};").collect()
    assert row.partitions_dropped == 6
    expected = spark.read.parquet(parquet).filter(f"NOT ({predicate})")
    assert_same_rows(read_table(spark, path), expected)
    # Nothing left to match: no commit.
    (again,) = spark.sql(f"DROP INDEXTABLES PARTITIONS FROM '{path}' WHERE {predicate}").collect()
    assert again.status == "no_action" and len(_history(spark, path)) == 2


def test_drop_partitions_errors_name_the_fault(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    write_table(_rows(spark), path, partition_by=("hour",))
    plain = str(tmp_path / "plain")
    write_table(_rows(spark).limit(10), plain)
    drop = f"DROP INDEXTABLES PARTITIONS FROM '{path}'"
    cases = {
        drop: "WHERE clause",
        f"{drop} WHERE msg = 'x'": "msg is not a partition column",
        f"{drop} WHERE hour > 3 AND id = 1": "id is not a partition",
        f"{drop} WHERE nope = 1": "nope",
        f"{drop} WHERE hour >": "hour >",
        f"{drop} WHERE 1 = 1": "name a partition column",
        f"DROP INDEXTABLES PARTITIONS FROM '{plain}' WHERE hour = 1": "not partitioned",
    }
    for sql, fault in cases.items():
        with pytest.raises(Exception) as e:
            spark.sql(sql).collect()
        text = error_text(e.value)
        assert "INDEXTABLES_INVALID_DROP_PARTITIONS" in text and fault in text, (sql, text)
    assert len(_history(spark, path)) == 1 and read_table(spark, path).count() == 2400
