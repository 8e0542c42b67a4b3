"""Reading what is not a healthy table fails clearly and loses no committed data."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from helpers import (
    MAX_ROWS_PER_SPLIT,
    assert_same_rows,
    error_text,
    read_table,
    split_files,
    write_table,
)
from indextables import IndexTablesError, convert_exception


@pytest.fixture(scope="module")
def small_df(spark: SparkSession) -> DataFrame:
    rows = [(i, f"host-{i % 7}", f"request {i} served in {i % 97} ms") for i in range(3000)]
    return spark.createDataFrame(rows, "id long, host string, message string").coalesce(1)


@pytest.fixture(scope="module")
def healthy_table(
    spark: SparkSession, small_df: DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> str:
    path = str(tmp_path_factory.mktemp("healthy") / "table")
    write_table(small_df, path, options={MAX_ROWS_PER_SPLIT: "1000"})
    return path


def _multi_split_table(small_df: DataFrame, path: str) -> list[Path]:
    write_table(small_df, path, options={MAX_ROWS_PER_SPLIT: "1000"})
    splits = split_files(path)
    assert len(splits) >= 2, splits
    return splits


@pytest.mark.parametrize("kind", ["missing", "empty_dir", "parquet_dir"])
def test_reading_a_path_that_is_not_a_table_names_the_path(
    spark: SparkSession, tmp_path: Path, kind: str, healthy_table: str, small_df: DataFrame
) -> None:
    path = tmp_path / "not_a_table"
    if kind == "empty_dir":
        path.mkdir()
    elif kind == "parquet_dir":
        small_df.write.parquet(str(path))
    with pytest.raises(Exception) as info:
        read_table(spark, str(path)).collect()
    assert str(path) in error_text(info.value)
    converted = convert_exception(info.value)
    assert isinstance(converted, IndexTablesError)
    assert converted.error_class == "INDEXTABLES_TABLE_NOT_FOUND", converted
    assert converted.java_class == "io.indextables.spark.exceptions.TransactionLogException"
    assert_same_rows(read_table(spark, healthy_table), small_df)


def test_an_invalid_option_maps_to_its_error_class_naming_the_key(
    spark: SparkSession, healthy_table: str
) -> None:
    with pytest.raises(Exception) as info:
        (
            spark.read.format("indextables")
            .option("spark.indextables.read.batchSize", "zero")
            .load(healthy_table)
            .collect()
        )
    converted = convert_exception(info.value)
    assert isinstance(converted, IndexTablesError)
    assert converted.error_class == "INDEXTABLES_INVALID_OPTION"
    assert "spark.indextables.read.batchSize" in converted.message


@pytest.mark.parametrize("damage", ["deleted", "garbage", "truncated"])
def test_reading_a_damaged_split_names_it_and_loses_nothing(
    spark: SparkSession, tmp_table: str, small_df: DataFrame, healthy_table: str, damage: str
) -> None:
    splits = _multi_split_table(small_df, tmp_table)
    victim = splits[len(splits) // 2]
    backup = Path(tmp_table).parent / "backup.split"
    shutil.copyfile(victim, backup)
    if damage == "deleted":
        victim.unlink()
    elif damage == "garbage":
        victim.write_bytes(os.urandom(victim.stat().st_size))
    else:
        victim.write_bytes(backup.read_bytes()[:100])
    with pytest.raises(Exception) as info:
        read_table(spark, tmp_table).collect()
    assert victim.name in error_text(info.value)
    # The failed read changed nothing: restoring the file makes the table whole again.
    shutil.copyfile(backup, victim)
    assert_same_rows(read_table(spark, tmp_table), small_df)
    assert_same_rows(read_table(spark, healthy_table), small_df)


def test_a_failed_write_removes_its_splits_and_keeps_the_committed_table(
    spark: SparkSession, small_df: DataFrame, tmp_table: str
) -> None:
    """A task failing mid-write aborts the job: the splits other tasks already moved into the
    table are deleted, no log version is added, and the table reads as before."""
    write_table(small_df, tmp_table, options={MAX_ROWS_PER_SPLIT: "1000"})
    before_splits = sorted(p.name for p in split_files(tmp_table))
    before_versions = sorted(os.listdir(Path(tmp_table) / "_transaction_log"))

    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    def explode_late(i: int) -> int:
        # Partition 1 fails after partition 0 has had time to finish and move its splits.
        if i == 2999:
            import time

            time.sleep(2)
            raise ValueError("boom: injected task failure")
        return i

    failing = small_df.repartition(2, "id").withColumn(
        "id", F.udf(explode_late, LongType())(F.col("id"))
    )
    with pytest.raises(Exception) as info:
        write_table(failing, tmp_table, mode="append", options={MAX_ROWS_PER_SPLIT: "500"})
    assert "boom" in error_text(info.value)

    assert sorted(p.name for p in split_files(tmp_table)) == before_splits
    assert sorted(os.listdir(Path(tmp_table) / "_transaction_log")) == before_versions
    assert_same_rows(read_table(spark, tmp_table), small_df)
