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
