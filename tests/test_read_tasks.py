"""A table of many small splits, as appends make them, read with several splits per task.

`spark.indextables.read.splitsPerTask` (auto by default, or a number) groups splits into read
tasks; whatever the grouping, every query returns exactly the rows the same query returns on a
Parquet copy, aggregates included, and the scan line says how many tasks read the splits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import assert_same_rows, error_text, scan_node, split_files, write_table

pytestmark = pytest.mark.usefixtures("layout", "searches_by_tasks")

APPENDS = 7
SPLITS_PER_TASK = "spark.indextables.read.splitsPerTask"


@pytest.fixture(scope="module")
def appended(
    spark: SparkSession, logs_df: DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, DataFrame]:
    """logs_df appended in APPENDS pieces of one split each, and the same rows as Parquet."""
    base = tmp_path_factory.mktemp("appended")
    path = str(base / "indextables")
    source = logs_df.select("id", "level", "host", "latency_ms", "message")
    for k in range(APPENDS):
        piece = source.filter(F.col("id") % APPENDS == k).coalesce(1)
        write_table(
            piece,
            path,
            mode="append",
            options={"spark.indextables.indexing.typemap.message": "text"},
        )
    source.write.parquet(str(base / "parquet"))
    return path, spark.read.parquet(str(base / "parquet"))


FILTERS: dict[str, Callable[[], Column]] = {
    "term": lambda: F.col("level") == "ERROR",
    "text": lambda: F.col("message").contains("block"),
    "range": lambda: (F.col("latency_ms") >= 100.0) & (F.col("latency_ms") < 400.0),
    "all": lambda: F.lit(True),
}


def _tasks(setting: str, splits: int, cores: int = 2, max_per_task: int = 8) -> int:
    """The read tasks `setting` makes of `splits` splits on `cores` cores."""
    if setting != "auto":
        return math.ceil(splits / int(setting))
    if splits <= cores:
        return splits
    rounds = math.ceil(math.ceil(splits / max_per_task) / cores)
    return min(splits, rounds * cores)


@pytest.mark.parametrize("setting", ["auto", "1", "3", "100"])
@pytest.mark.parametrize("name", sorted(FILTERS))
def test_any_grouping_returns_exactly_parquets_rows(
    spark: SparkSession,
    appended: tuple[str, DataFrame],
    setting: str,
    name: str,
) -> None:
    path, parquet = appended
    assert len(split_files(path)) == APPENDS
    cond = FILTERS[name]
    table = spark.read.format("indextables").option(SPLITS_PER_TASK, setting).load(path)
    got = table.filter(cond())
    line = scan_node(got)
    m = re.search(r"Splits: (\d+)/(\d+), Tasks: (\d+)", line)
    assert m, line
    splits, tasks = int(m.group(1)), int(m.group(3))
    if name == "all":
        assert splits == APPENDS
    assert tasks == _tasks(setting, splits), line
    assert got.rdd.getNumPartitions() == tasks
    assert_same_rows(got, parquet.filter(cond()))


@pytest.mark.parametrize("setting", ["auto", "3"])
def test_pushed_aggregates_add_up_over_grouped_splits(
    spark: SparkSession, appended: tuple[str, DataFrame], setting: str
) -> None:
    path, parquet = appended
    table = spark.read.format("indextables").option(SPLITS_PER_TASK, setting).load(path)
    counted = table.filter(F.col("level") == "ERROR").groupBy("level").count()
    assert "PushedAggregation" in scan_node(counted), scan_node(counted)
    expected = parquet.filter(F.col("level") == "ERROR").groupBy("level").count()
    assert_same_rows(counted, expected)
    assert table.count() == parquet.count()


def test_an_invalid_setting_fails_naming_the_key(
    spark: SparkSession, appended: tuple[str, DataFrame]
) -> None:
    path, _ = appended
    reader = spark.read.format("indextables").option(SPLITS_PER_TASK, "0")
    with pytest.raises(Exception) as info:
        reader.load(path).collect()
    text = error_text(info.value)
    assert "INDEXTABLES_INVALID_OPTION" in text and SPLITS_PER_TASK in text, text
