"""Overwrites that replace only what they say: replaceWhere and dynamic partition overwrite.

Each write is done as a user does it, and the table's rows afterwards are compared with what the
same operation gives on a Parquet copy (Spark's own dynamic partition overwrite), or, for
replaceWhere, which Parquet lacks, with the rows Delta's semantics define: the old rows where the
predicate is not TRUE, plus the new rows. A write that cannot be done as asked fails before it
commits, and the table then reads exactly its previous version.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from helpers import assert_same_rows, error_text, read_table, split_files, write_table

pytestmark = pytest.mark.usefixtures("layout")

SCHEMA = "id long, day date, level string, message string"
TEXT = {"spark.indextables.indexing.typemap.message": "text"}


def _rows(first: int, n: int, day: dt.date, levels: tuple[str | None, ...]) -> list[Row]:
    return [
        Row(
            id=first + i,
            day=day,
            level=levels[i % len(levels)],
            message=f"request {first + i} served block blk_{(first + i) * 7}",
        )
        for i in range(n)
    ]


@pytest.fixture
def days(spark: SparkSession) -> DataFrame:
    """Three days of rows, with ERROR, INFO and null levels mixed in every day."""
    rows: list[Row] = []
    for d in range(3):
        rows += _rows(1000 * d, 60, dt.date(2024, 1, 1 + d), ("ERROR", "INFO", None))
    return spark.createDataFrame(rows, SCHEMA)


def _history(spark: SparkSession, path: str) -> list[Row]:
    return spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'").collect()


def _live_splits(spark: SparkSession, path: str) -> set[str]:
    rows = spark.sql(f"DESCRIBE INDEXTABLES TRANSACTION LOG '{path}'").collect()
    return {r.path for r in rows}


def test_replace_where_on_a_partition_column_replaces_that_partition_only(
    spark: SparkSession, days: DataFrame, tmp_table: str
) -> None:
    write_table(days, tmp_table, partition_by=("day",), options=TEXT)
    day2 = {p for p in split_files(tmp_table) if "day=2024-01-02" in str(p)}
    others = set(split_files(tmp_table)) - day2
    new = spark.createDataFrame(_rows(5000, 10, dt.date(2024, 1, 2), ("WARN",)), SCHEMA)
    (
        new.write.format("indextables")
        .mode("overwrite")
        .option("replaceWhere", "day = DATE'2024-01-02'")
        .save(tmp_table)
    )
    expected = days.filter(F.col("day") != F.lit(dt.date(2024, 1, 2))).unionByName(new)
    assert_same_rows(read_table(spark, tmp_table), expected)
    latest = _history(spark, tmp_table)[0]
    assert latest.operation == "REPLACE WHERE"
    assert latest.operation_parameters["predicate"] == "day = DATE'2024-01-02'"
    assert latest.operation_parameters["mode"] == "Overwrite"
    # The day's splits are removed whole (none rewritten); the other days' are not touched.
    assert latest.files_removed == len(day2)
    live = {str(p) for p in split_files(tmp_table)}
    assert {str(p) for p in others} <= live


def test_replace_where_literals_are_cast_to_the_column_type_as_spark_casts_them(
    spark: SparkSession, days: DataFrame, tmp_table: str
) -> None:
    """`day = '2024-01-02'` on a date column and `id < '1010'` on a long column, as in Delta."""
    write_table(days, tmp_table, partition_by=("day",))
    new = spark.createDataFrame(_rows(5000, 10, dt.date(2024, 1, 2), ("WARN",)), SCHEMA)
    write_table(new, tmp_table, mode="overwrite", options={"replaceWhere": "day = '2024-01-02'"})
    expected = days.filter(F.col("day") != F.lit(dt.date(2024, 1, 2))).unionByName(new)
    assert_same_rows(read_table(spark, tmp_table), expected)
    low = spark.createDataFrame(_rows(1000, 5, dt.date(2024, 1, 2), ("INFO",)), SCHEMA)
    write_table(low, tmp_table, mode="overwrite", options={"replaceWhere": "id < '1010'"})
    expected = expected.filter(F.col("id") >= 1010).unionByName(low)
    assert_same_rows(read_table(spark, tmp_table), expected)


def test_replace_where_on_a_data_column_keeps_the_other_rows_of_mixed_splits(
    spark: SparkSession, days: DataFrame, tmp_table: str
) -> None:
    write_table(days.coalesce(1), tmp_table, options=TEXT)
    new = spark.createDataFrame(_rows(7000, 5, dt.date(2024, 1, 9), ("ERROR",)), SCHEMA)
    (
        new.write.format("indextables")
        .mode("overwrite")
        .option("replaceWhere", "level = 'ERROR'")
        .save(tmp_table)
    )
    # NULL levels are not TRUE for the predicate: they stay, as in Delta.
    kept = days.filter(~F.coalesce(F.col("level") == "ERROR", F.lit(False)))
    assert_same_rows(read_table(spark, tmp_table), kept.unionByName(new))
    table = read_table(spark, tmp_table)
    assert table.filter(F.col("level").isNull()).count() == 60
    assert table.filter(F.col("message").contains("request 1004 served")).count() == 1
    latest = _history(spark, tmp_table)[0]
    assert latest.operation == "REPLACE WHERE" and latest.files_removed == 1


def test_a_row_outside_replace_where_fails_and_commits_nothing(
    spark: SparkSession, days: DataFrame, tmp_table: str
) -> None:
    write_table(days, tmp_table, partition_by=("day",), options=TEXT)
    versions = len(_history(spark, tmp_table))
    live = _live_splits(spark, tmp_table)
    bad = spark.createDataFrame(
        _rows(5000, 3, dt.date(2024, 1, 2), ("WARN",))
        + _rows(6000, 1, dt.date(2024, 1, 3), ("WARN",)),
        SCHEMA,
    )
    with pytest.raises(Exception) as info:
        (
            bad.write.format("indextables")
            .mode("overwrite")
            .option("replaceWhere", "day = DATE'2024-01-02'")
            .save(tmp_table)
        )
    text = error_text(info.value)
    assert "INDEXTABLES_REPLACE_WHERE_VIOLATION" in text and "2024-01-02" in text, text
    # Nothing committed: the log and its live splits are as before. (A task that finished
    # while the job failed may leave an uncommitted split file behind, as in Delta; the log
    # never references it.)
    assert len(_history(spark, tmp_table)) == versions
    assert _live_splits(spark, tmp_table) == live
    assert_same_rows(read_table(spark, tmp_table), days)


@pytest.mark.parametrize(
    ("predicate", "names"),
    [
        ("no_such_column = 1", "no_such_column"),
        ("day = ", "day ="),
        ("length(message) > 3", "length(message)"),
    ],
)
def test_an_unusable_replace_where_fails_before_writing(
    spark: SparkSession, days: DataFrame, tmp_table: str, predicate: str, names: str
) -> None:
    write_table(days, tmp_table, options=TEXT)
    files = set(split_files(tmp_table))
    writer = days.write.format("indextables").mode("overwrite")
    with pytest.raises(Exception) as info:
        writer.option("replaceWhere", predicate).save(tmp_table)
    text = error_text(info.value)
    assert "INDEXTABLES_INVALID_REPLACE_WHERE" in text and names in text, text
    assert set(split_files(tmp_table)) == files
    assert_same_rows(read_table(spark, tmp_table), days)


@pytest.mark.parametrize("how", ["session", "option"])
def test_dynamic_partition_overwrite_matches_parquet(
    spark: SparkSession, days: DataFrame, tmp_path: Path, how: str
) -> None:
    it_path, pq_path = str(tmp_path / "it"), str(tmp_path / "pq")
    write_table(days, it_path, partition_by=("day",), options=TEXT)
    days.write.partitionBy("day").parquet(pq_path)
    day2 = [p for p in split_files(it_path) if "day=2024-01-02" in str(p)]
    new = spark.createDataFrame(
        _rows(8000, 4, dt.date(2024, 1, 2), ("WARN",))
        + _rows(9000, 4, dt.date(2024, 1, 5), ("WARN",)),
        SCHEMA,
    )
    conf_key = "spark.sql.sources.partitionOverwriteMode"
    if how == "session":
        spark.conf.set(conf_key, "dynamic")
    try:
        for fmt, path in (("indextables", it_path), ("parquet", pq_path)):
            writer = new.write.format(fmt).mode("overwrite").partitionBy("day")
            if how == "option":
                writer = writer.option("partitionOverwriteMode", "dynamic")
            writer.save(path)
    finally:
        spark.conf.unset(conf_key)
    assert_same_rows(read_table(spark, it_path), spark.read.parquet(pq_path))
    latest = _history(spark, it_path)[0]
    assert latest.operation == "OVERWRITE PARTITIONS"
    assert latest.operation_parameters["partitionOverwriteMode"] == "dynamic"
    assert latest.files_removed == len(day2)


def test_replace_where_with_dynamic_partition_overwrite_is_refused(
    spark: SparkSession, days: DataFrame, tmp_table: str
) -> None:
    write_table(days, tmp_table, partition_by=("day",), options=TEXT)
    with pytest.raises(Exception) as info:
        (
            days.write.format("indextables")
            .mode("overwrite")
            .option("replaceWhere", "day = DATE'2024-01-02'")
            .option("partitionOverwriteMode", "dynamic")
            .save(tmp_table)
        )
    assert "replaceWhere" in error_text(info.value)
    assert_same_rows(read_table(spark, tmp_table), days)


def test_a_static_overwrite_still_replaces_the_table_and_says_so(
    spark: SparkSession, days: DataFrame, tmp_table: str
) -> None:
    write_table(days, tmp_table, partition_by=("day",), options=TEXT)
    new = days.filter(F.col("id") < 10)
    new.write.format("indextables").mode("overwrite").partitionBy("day").save(tmp_table)
    assert_same_rows(read_table(spark, tmp_table), new)
    latest = _history(spark, tmp_table)[0]
    assert latest.operation == "OVERWRITE"
    assert latest.operation_parameters == {"mode": "Overwrite"}
    first = _history(spark, tmp_table)[-1]
    assert first.version == 0 and first.operation == "CREATE"
    assert first.operation_parameters == {"mode": "Append"}


def test_datasource_v2_writes_on_a_path_table(
    spark: SparkSession, days: DataFrame, tmp_table: str
) -> None:
    write_table(days, tmp_table, partition_by=("day",), options=TEXT)
    name = f"indextables.`{tmp_table}`"
    extra = spark.createDataFrame(_rows(5000, 5, dt.date(2024, 1, 3), ("INFO",)), SCHEMA)
    extra.writeTo(name).append()
    expected = days.unionByName(extra)
    assert_same_rows(spark.table(name), expected)
    assert _history(spark, tmp_table)[0].operation == "WRITE"

    # overwrite(condition) replaces the rows the condition holds for, as replaceWhere does.
    first = F.lit(dt.date(2024, 1, 1))
    new = spark.createDataFrame(_rows(6000, 4, dt.date(2024, 1, 1), ("WARN",)), SCHEMA)
    new.writeTo(name).overwrite(F.col("day") == first)
    expected = expected.filter(F.col("day") != first).unionByName(new)
    assert_same_rows(read_table(spark, tmp_table), expected)
    assert _history(spark, tmp_table)[0].operation == "REPLACE WHERE"

    # overwritePartitions() replaces the partitions the rows fall in.
    second = F.lit(dt.date(2024, 1, 2))
    newer = spark.createDataFrame(_rows(7000, 3, dt.date(2024, 1, 2), ("DEBUG",)), SCHEMA)
    newer.writeTo(name).overwritePartitions()
    expected = expected.filter(F.col("day") != second).unionByName(newer)
    assert_same_rows(read_table(spark, tmp_table), expected)
    assert _history(spark, tmp_table)[0].operation == "OVERWRITE PARTITIONS"

    # A row the condition does not hold for fails the write; nothing is committed.
    versions = len(_history(spark, tmp_table))
    with pytest.raises(Exception) as info:
        newer.writeTo(name).overwrite(F.col("day") == first)
    assert "INDEXTABLES_REPLACE_WHERE_VIOLATION" in error_text(info.value)
    assert len(_history(spark, tmp_table)) == versions
    assert_same_rows(read_table(spark, tmp_table), expected)


def test_a_path_name_without_a_table_is_not_found(spark: SparkSession, tmp_path: Path) -> None:
    missing = tmp_path / "nothing"
    with pytest.raises(Exception) as info:
        spark.table(f"indextables.`{missing}`").collect()
    text = error_text(info.value)
    assert "INDEXTABLES_TABLE_NOT_FOUND" in text and str(missing) in text, text
