"""A companion index follows the columns its Delta or Iceberg source gains, as mergeSchema does.

The source tables are changed by their own libraries: a Delta append with `mergeSchema`, an
Iceberg `ALTER TABLE ... ADD COLUMN`. After each sync the index holds the new columns; the splits
built before read them as NULL, as the source's own reader reads its older files; searches on the
new columns are pushed to the index; and every answer equals the source's. A column that changes
type or leaves is refused by name, with nothing committed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import delta_oracle
from helpers import assert_same_rows, read_table, version_actions
from test_companion_delta import (
    assert_index_answers_as,
    build,
    create_delta,
    data_files,
    error_of,
    make_rows,
    plan_of,
)
from test_companion_iceberg import build as build_iceberg
from test_companion_iceberg import build_statement, create_iceberg

pytestmark = pytest.mark.skipif(
    not (delta_oracle.is_installed() and delta_oracle.iceberg_installed()),
    reason="build/package.sh puts Delta's and Iceberg's JARs in place",
)

REGIONS = ["eu", "us", "ap"]


def with_new_columns(rows: DataFrame) -> DataFrame:
    """`rows` with two more columns: `region` (a string, sometimes NULL) and `score` (an int)."""
    return rows.withColumn(
        "region",
        F.when(F.col("id") % 7 == 0, F.lit(None)).otherwise(
            F.element_at(F.array(*[F.lit(r) for r in REGIONS]), (F.col("id") % 3 + 1).cast("int"))
        ),
    ).withColumn("score", (F.col("id") % 50).cast("int"))


def assert_new_columns_answer_as(spark: SparkSession, index: Path, src: DataFrame) -> None:
    """Every answer of the index equals the source's, and so do searches on the new columns,
    pushed to the index, whether a split holds the column or reads it as NULL."""
    assert_index_answers_as(spark, index, src)
    idx = read_table(spark, str(index))
    assert {"region", "score"} <= set(idx.columns)
    for condition in (
        F.col("region") == "eu",
        F.col("region").isNull(),
        F.col("region").isNotNull() & (F.col("host") == "host-2"),
        F.col("score") >= 45,
        ~(F.col("region") == "us"),
    ):
        found = idx.where(condition)
        assert "PushedQuery" in plan_of(found), plan_of(found)
        assert sorted(r.id for r in found.select("id").collect()) == sorted(
            r.id for r in src.where(condition).select("id").collect()
        ), str(condition)
    # Aggregates over the new columns, which the older splits hold no value of.
    assert_same_rows(idx.groupBy("region").count(), src.groupBy("region").count())
    aggregates = [F.count("region"), F.max("score"), F.min("score"), F.sum("score")]
    assert idx.agg(*aggregates).collect() == src.agg(*aggregates).collect()
    assert idx.where(F.col("region").isNull()).count() > 0
    assert idx.where(F.col("region") == "ap").count() > 0


def log_actions(index: Path) -> list[dict[str, Any]]:
    """Every action of the index's log, in version order."""
    return [
        action
        for version in sorted((index / "_transaction_log").glob("*.json"))
        for action in version_actions(str(index), int(version.stem))
    ]


def shapes_of_last_version(spark: SparkSession, index: Path, source: Path) -> list[set[int]]:
    """For each partition the index's last version added splits to, how many columns the files
    of each of them have. Every split's files have one set of columns."""
    last = max(int(v.stem) for v in (index / "_transaction_log").glob("*.json"))
    by_partition: dict[str, list[int]] = defaultdict(list)
    for add in (a["add"] for a in version_actions(str(index), last) if "add" in a):
        shapes = {
            tuple(spark.read.parquet(str(source / f)).columns) for f in add["companionSourceFiles"]
        }
        assert len(shapes) == 1, (add["path"], shapes)
        by_partition[str(sorted(add["partitionValues"].items()))].append(len(shapes.pop()))
    return [set(sizes) for sizes in by_partition.values()]


def test_a_delta_index_takes_the_columns_its_source_gains(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 400, seed=11, first_id=0), vectors=False)
    build(spark, source, index)
    before = data_files(source)
    with_new_columns(make_rows(spark, 300, seed=12, first_id=400)).write.format("delta").mode(
        "append"
    ).option("mergeSchema", "true").save(str(source))

    synced = build(spark, source, index)
    assert synced.status == "success"
    assert synced.parquet_files_indexed == len(data_files(source) - before) > 0
    assert read_table(spark, str(index)).schema["region"].dataType.simpleString() == "string"
    assert_new_columns_answer_as(spark, index, delta.read())

    # A DELETE without deletion vectors rewrites an old file with the new columns: the rebuilt
    # split's remaining old file and the rewritten one have two shapes, a split each.
    delta.sql("DELETE FROM {table} WHERE id = 3")
    assert build(spark, source, index).status == "success"
    assert_new_columns_answer_as(spark, index, delta.read())
    assert shapes_of_last_version(spark, index, source) == [{6, 8}]

    # A first build over the table as it now stands, older files and all.
    fresh = tmp_path / "fresh"
    assert build(spark, source, fresh).status == "success"
    assert_new_columns_answer_as(spark, fresh, delta.read())

    # A metadata-only change (ALTER TABLE ADD COLUMNS) is a sync of its own: no file to index.
    delta.sql("ALTER TABLE {table} ADD COLUMNS (note STRING)")
    only_columns = build(spark, source, index)
    assert only_columns.status == "success"
    assert only_columns.parquet_files_indexed == 0
    assert "note" in read_table(spark, str(index)).columns
    assert read_table(spark, str(index)).where(F.col("note").isNull()).count() == (
        delta.read().count()
    )


def test_chosen_columns_stay_chosen_and_new_ones_take_the_defaults(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, index = tmp_path / "delta", tmp_path / "index"
    delta = create_delta(spark, source, make_rows(spark, 200, seed=13, first_id=0))
    clause = "INCLUDE COLUMNS (id, msg, host, level, latency, status)"
    build(spark, source, index, clause)
    with_new_columns(make_rows(spark, 200, seed=14, first_id=200)).write.format("delta").mode(
        "append"
    ).option("mergeSchema", "true").save(str(source))
    # The same clause again: the new columns are not among those it includes.
    assert build(spark, source, index, clause).status == "success"
    (metadata,) = [a["metaData"] for a in log_actions(index) if "metaData" in a][-1:]
    assert set(metadata["configuration"]["indextables.companion.excludedColumns"].split(",")) == {
        "region",
        "score",
    }
    idx, src = read_table(spark, str(index)), delta.read()
    assert sorted(idx.where(F.col("region") == "eu").select("id").collect()) == sorted(
        src.where(F.col("region") == "eu").select("id").collect()
    )
    # No clause: the index keeps what it recorded.
    assert build(spark, source, index).status == "no_action"


def test_an_iceberg_index_takes_added_columns_and_names_a_dropped_one(
    spark: SparkSession,
    ice: Path,
    tmp_path: Path,
) -> None:
    index = tmp_path / "index"
    table = create_iceberg(spark, "evolving", make_rows(spark, 400, seed=15, first_id=0))
    build_iceberg(spark, table, index)
    spark.sql(f"ALTER TABLE {table} ADD COLUMN region string")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN score int")
    with_new_columns(make_rows(spark, 300, seed=16, first_id=400)).select(
        *spark.table(table).columns
    ).writeTo(table).append()
    assert build_iceberg(spark, table, index).status == "success"
    assert_new_columns_answer_as(spark, index, spark.table(table))
    # Position deletes on old and new files alike.
    spark.sql(f"DELETE FROM {table} WHERE id % 9 = 0")
    assert build_iceberg(spark, table, index).status == "success"
    assert_new_columns_answer_as(spark, index, spark.table(table))

    versions = sorted((index / "_transaction_log").glob("*.json"))
    spark.sql(f"ALTER TABLE {table} DROP COLUMN score")
    e = error_of(spark, build_statement(table, index))
    assert e.error_class == "INDEXTABLES_COMPANION_SCHEMA_CHANGED", str(e)
    assert "'score'" in str(e) and "no longer holds" in str(e), str(e)
    assert sorted((index / "_transaction_log").glob("*.json")) == versions
