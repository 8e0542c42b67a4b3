"""CHECKPOINT / DESCRIBE INDEXTABLES commands from PySpark, through the package's helper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from helpers import read_table, write_table

pytestmark = pytest.mark.usefixtures("layout")


@pytest.fixture(scope="module")
def two_versions(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("commands") / "t")
    write_table(spark.createDataFrame([(1, "a"), (2, "b")], "id long, s string").coalesce(1), path)
    write_table(spark.createDataFrame([(3, "c")], "id long, s string").coalesce(1), path, "append")
    read_table(spark, path).createOrReplaceTempView("cmd_view")
    return path


def test_describe_state(spark: SparkSession, two_versions: str) -> None:
    for target in (f"'{two_versions}'", "cmd_view"):
        (row,) = spark.sql(f"DESCRIBE INDEXTABLES STATE {target}").collect()
        assert (row.version, row.num_files, row.num_records) == (1, 2, 3)


def test_describe_transaction_log_and_history(spark: SparkSession, two_versions: str) -> None:
    files = spark.sql(f"DESCRIBE TANTIVY4SPARK TRANSACTION LOG '{two_versions}'").collect()
    assert sorted(f.num_records for f in files) == [1, 2]
    history = spark.sql("describe indextables history cmd_view").collect()
    assert [(h.version, h.operation, h.files_added) for h in history] == [
        (1, "WRITE", 1),
        (0, "CREATE", 1),
    ]


def test_checkpoint_writes_an_avro_state_the_table_reads_from(
    spark: SparkSession, two_versions: str
) -> None:
    (row,) = spark.sql(f"CHECKPOINT INDEXTABLES '{two_versions}'").collect()
    assert row.version == 1
    log = Path(two_versions) / "_transaction_log"
    pointer = json.loads((log / "_last_checkpoint").read_text())
    assert (pointer["version"], pointer["format"]) == (1, "avro-state")
    assert (log / pointer["stateDir"] / "_manifest.avro").is_file()
    assert sorted(r.id for r in read_table(spark, two_versions).collect()) == [1, 2, 3]
