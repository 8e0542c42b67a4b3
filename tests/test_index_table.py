"""The Python `indextables.IndexTable` handle, by path and by name, against the SQL commands it
issues and against a Parquet copy of the rows."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from helpers import assert_same_rows, write_table
from indextables import IndexTable, IndexTablesError

pytestmark = pytest.mark.usefixtures("layout")

ROWS = [(1, "a", "connection timeout"), (2, "b", "block served"), (3, "c", "timeout again")]
SCHEMA = "id long, s string, message string"


@pytest.fixture
def rows(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(ROWS, SCHEMA).coalesce(1)


@pytest.fixture
def name(spark: SparkSession) -> Iterator[str]:
    table = f"handle_{uuid.uuid4().hex[:10]}"
    yield table
    spark.sql(f"DROP TABLE IF EXISTS {table}")


def _two_versions(spark: SparkSession, rows: DataFrame, path: str) -> None:
    write_table(
        rows.filter("id <= 2"), path, options={"spark.indextables.indexing.typemap.message": "text"}
    )
    write_table(rows.filter("id > 2"), path, "append")


def test_for_path_reads_describes_and_checkpoints(
    spark: SparkSession, rows: DataFrame, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    _two_versions(spark, rows, path)
    table = IndexTable.for_path(spark, path)

    assert_same_rows(table.to_df(), rows)
    assert table.to_df().filter("message indexquery 'timeout'").count() == 2
    history = table.history().collect()
    assert [(h.version, h.operation) for h in history] == [(1, "WRITE"), (0, "CREATE")]
    # The same rows as the SQL command users run.
    sql = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{path}'")
    assert_same_rows(table.history().drop("timestamp"), sql.drop("timestamp"))
    (state,) = table.describe().collect()
    assert (state.version, state.num_files, state.num_records) == (1, 2, 3)

    assert table.checkpoint() == 1
    pointer = json.loads((Path(path) / "_transaction_log" / "_last_checkpoint").read_text())
    assert pointer["version"] == 1


def test_for_name_on_a_catalog_table(spark: SparkSession, rows: DataFrame, name: str) -> None:
    rows.write.format("indextables").saveAsTable(name)
    rows.writeTo(name).append()
    table = IndexTable.for_name(spark, f"default.{name}")

    assert table.sql_name == f"`default`.`{name}`"
    assert_same_rows(table.to_df(), rows.unionByName(rows))
    assert [h.version for h in table.history().collect()] == [1, 0]
    (state,) = table.describe().collect()
    assert state.num_records == 2 * len(ROWS)
    assert table.checkpoint() == 1


def test_a_path_with_quotes_and_backslashes(
    spark: SparkSession, rows: DataFrame, tmp_path: Path
) -> None:
    path = str(tmp_path / "it's a \\ table")
    write_table(rows, path)
    table = IndexTable.for_path(spark, path)
    (state,) = table.describe().collect()
    assert state.num_records == len(ROWS)


def test_missing_tables_raise_clear_python_errors(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(IndexTablesError) as by_name:
        IndexTable.for_name(spark, "no_such_table_here")
    assert by_name.value.error_class == "INDEXTABLES_TABLE_NOT_FOUND"
    assert "no_such_table_here" in str(by_name.value)

    missing = str(tmp_path / "nothing")
    with pytest.raises(IndexTablesError) as by_path:
        IndexTable.for_path(spark, missing)
    assert by_path.value.error_class == "INDEXTABLES_TABLE_NOT_FOUND"
    assert missing in str(by_path.value)

    spark.createDataFrame([(1,)], "id int").createOrReplaceTempView("handle_not_ours")
    with pytest.raises(IndexTablesError) as not_ours:
        IndexTable.for_name(spark, "handle_not_ours")
    assert not_ours.value.error_class == "INDEXTABLES_COMMAND_TARGET"

    with pytest.raises(TypeError, match="name must be a non-empty str"):
        IndexTable.for_name(spark, "")


def test_maintenance_methods_issue_the_commands_and_keep_the_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    """merge_splits, prewarm, drop_partitions, truncate_time_travel and purge on one partitioned
    table of five appends, each checked against the same rows in Parquet and against the log."""
    path, parquet = str(tmp_path / "t"), str(tmp_path / "p")
    df = spark.range(500).selectExpr(
        "id", "CAST(id % 2 AS INT) AS part", "concat('event ', CAST(id AS STRING)) AS message"
    )
    for i in range(5):
        chunk = df.filter(f"id % 5 = {i}").coalesce(1)
        write_table(chunk, path, "errorifexists" if i == 0 else "append", partition_by=("part",))
    df.write.partitionBy("part").parquet(parquet)
    table = IndexTable.for_path(spark, path)
    (before,) = table.describe().collect()
    assert before.num_files == 10  # five appends, two partitions each

    (merged,) = table.merge_splits(target_size="100M", max_source_splits_per_merge=10).collect()
    assert merged.metrics.status == "success", merged
    (after,) = table.describe().collect()
    assert after.num_files == 2 and after.version == 5
    assert_same_rows(table.to_df(), spark.read.parquet(parquet))

    (warm,) = table.prewarm(segments=["TERM_DICT", "POSTINGS"], where="part = 1").collect()
    assert warm.splits_prewarmed == 1

    (dropped,) = table.drop_partitions("part = 1").collect()
    assert dropped.splits_removed == 1
    assert_same_rows(table.to_df(), spark.read.parquet(parquet).filter("part = 0"))

    table.checkpoint()
    (truncated,) = table.truncate_time_travel().collect()
    assert truncated.versions_deleted >= 5
    spark.conf.set("spark.indextables.purge.retentionCheckEnabled", "false")
    try:
        (dry,) = table.purge(older_than_hours=0, dry_run=True).collect()
        (done,) = table.purge(older_than_hours=0).collect()
    finally:
        spark.conf.unset("spark.indextables.purge.retentionCheckEnabled")
    # The ten merged-away splits and the dropped partition's merged split are gone, and on the
    # companion layout the dropped partition's five Parquet files (the merged splits' sources).
    dropped_parquet = 5 if list(Path(path).rglob("*.parquet")) else 0
    assert dry.metrics.orphaned_files_found == done.metrics.orphaned_files_deleted
    assert done.metrics.orphaned_files_deleted == 11 + dropped_parquet
    assert len(list(Path(path).rglob("*.split"))) == 1
    assert_same_rows(table.to_df(), spark.read.parquet(parquet).filter("part = 0"))

    with pytest.raises(ValueError):
        table.merge_splits(max_dest_splits=0)
    with pytest.raises(TypeError):
        table.drop_partitions("")
