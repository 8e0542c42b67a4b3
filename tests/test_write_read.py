"""Save modes, Hive-style partitioning, maxRowsPerSplit and reading everything back."""

from __future__ import annotations

import datetime as dt
import os
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

pytestmark = pytest.mark.usefixtures("layout")


def _events(spark: SparkSession, start: int, count: int) -> DataFrame:
    regions = ["eu", "us", "apac"]
    rows = [
        (
            i,
            regions[i % 3],
            dt.date(2024, 3, 1 + i % 4),
            f"event {i} from {regions[i % 3]}",
            i * 0.5,
        )
        for i in range(start, start + count)
    ]
    return spark.createDataFrame(rows, "id long, region string, day date, message string, x double")


def test_read_returns_every_written_row(spark: SparkSession, tmp_table: str) -> None:
    df = _events(spark, 0, 500)
    write_table(df, tmp_table)
    assert_same_rows(read_table(spark, tmp_table), df)
    assert os.path.isdir(os.path.join(tmp_table, "_transaction_log"))


def test_append_adds_rows_to_an_existing_table(spark: SparkSession, tmp_table: str) -> None:
    first, second = _events(spark, 0, 300), _events(spark, 300, 200)
    write_table(first, tmp_table, mode="append")
    write_table(second, tmp_table, mode="append")
    assert_same_rows(read_table(spark, tmp_table), first.unionByName(second))


def test_overwrite_replaces_the_rows(spark: SparkSession, tmp_table: str) -> None:
    write_table(_events(spark, 0, 300), tmp_table)
    replacement = _events(spark, 1000, 50)
    write_table(replacement, tmp_table, mode="overwrite")
    assert_same_rows(read_table(spark, tmp_table), replacement)


@pytest.mark.parametrize("mode", ["errorifexists", "error"])
def test_errorifexists_fails_on_an_existing_table_and_keeps_it(
    spark: SparkSession, tmp_table: str, mode: str
) -> None:
    original = _events(spark, 0, 100)
    write_table(original, tmp_table)
    with pytest.raises(Exception) as info:
        write_table(_events(spark, 100, 100), tmp_table, mode=mode)
    assert "exist" in error_text(info.value).lower()
    assert_same_rows(read_table(spark, tmp_table), original)


def test_default_save_mode_is_errorifexists(spark: SparkSession, tmp_table: str) -> None:
    original = _events(spark, 0, 100)
    original.write.format("indextables").save(tmp_table)
    with pytest.raises(Exception) as info:
        _events(spark, 100, 10).write.format("indextables").save(tmp_table)
    assert "exist" in error_text(info.value).lower()
    assert_same_rows(read_table(spark, tmp_table), original)


def test_ignore_is_a_no_op_on_an_existing_table(spark: SparkSession, tmp_table: str) -> None:
    original = _events(spark, 0, 100)
    write_table(original, tmp_table)
    write_table(_events(spark, 100, 100), tmp_table, mode="ignore")
    assert_same_rows(read_table(spark, tmp_table), original)


@pytest.mark.parametrize("mode", ["errorifexists", "ignore", "overwrite"])
def test_every_mode_creates_a_missing_table(spark: SparkSession, tmp_table: str, mode: str) -> None:
    df = _events(spark, 0, 40)
    write_table(df, tmp_table, mode=mode)
    assert_same_rows(read_table(spark, tmp_table), df)


def test_partition_by_writes_hive_style_directories(spark: SparkSession, tmp_table: str) -> None:
    df = _events(spark, 0, 600)
    write_table(df, tmp_table, partition_by=("region", "day"))
    table = Path(tmp_table)
    regions = sorted(p.name for p in table.iterdir() if p.is_dir() and "=" in p.name)
    assert regions == ["region=apac", "region=eu", "region=us"]
    days = sorted(p.name for p in (table / "region=eu").iterdir() if p.is_dir())
    assert days == [f"day=2024-03-0{d}" for d in range(1, 5)]
    for split in split_files(tmp_table):
        rel = split.relative_to(table).parts
        assert rel[0].startswith("region=") and rel[1].startswith("day="), split
    assert_same_rows(read_table(spark, tmp_table), df)


def test_max_rows_per_split_makes_several_splits(spark: SparkSession, tmp_table: str) -> None:
    df = _events(spark, 0, 5000).coalesce(1)
    write_table(df, tmp_table, options={MAX_ROWS_PER_SPLIT: "1000"})
    assert len(split_files(tmp_table)) >= 5
    assert_same_rows(read_table(spark, tmp_table), df)
