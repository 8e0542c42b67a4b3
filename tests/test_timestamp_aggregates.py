"""MIN/MAX on timestamp columns under a filter or GROUP BY, through the fast field (issue 28
item 2).

A fast field may hold a timestamp to the second only, so its MIN/MAX is Spark's only where no
value has a fraction of a second. Each split records how many of its timestamps have one (the
add action's `stats`, `{"subSecondCount": {...}}`); the aggregate is pushed where every split
the scan reads holds none, and Spark aggregates the rows otherwise. Answers are checked against
Parquet, with NULLs, timestamps before 1970 and groups without a value."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import assert_same_rows, read_table, scan_node, write_table

pytestmark = pytest.mark.usefixtures("layout")

QUERIES: dict[str, Callable[[DataFrame], DataFrame]] = {
    "filtered": lambda d: d.filter("month BETWEEN 3 AND 5").agg(
        F.min("time_hour").alias("lo"), F.max("time_hour").alias("hi")
    ),
    "grouped": lambda d: d.groupBy("carrier").agg(
        F.min("time_hour").alias("lo"), F.max("time_hour").alias("hi"), F.count("*").alias("n")
    ),
    "grouped_and_filtered": lambda d: (
        d.filter("month > 6").groupBy("carrier").agg(F.max("time_hour").alias("hi"))
    ),
}


def _flights(spark: SparkSession, first: int, n: int, fraction: bool) -> DataFrame:
    """n flights; `time_hour` in whole seconds (some before 1970, some NULL), or with
    milliseconds when `fraction`."""
    seconds = F.col("id") * 3_601 - 200_000 + F.lit(1_700_000_000) * (F.col("id") % 2)
    micros = seconds * 1_000_000 + (F.col("id") % 7 * 1_000 if fraction else F.lit(0))
    return (
        spark.range(first, first + n)
        .select(
            F.col("id"),
            (F.col("id") % 12 + 1).cast("int").alias("month"),
            F.concat(F.lit("C"), (F.col("id") % 4).cast("string")).alias("carrier"),
            F.when(F.col("id") % 11 == 0, F.lit(None))
            .otherwise(F.timestamp_micros(micros))
            .alias("time_hour"),
        )
        .coalesce(1)
    )


def _answered(spark: SparkSession, root: Path, fraction: bool, query: str) -> DataFrame:
    """`query` over a table of two splits (the second with fractions of a second when
    `fraction`), its rows checked against the same query over Parquet."""
    path = str(root / "table")
    parts = [_flights(spark, 0, 400, False), _flights(spark, 400, 300, fraction)]
    for i, df in enumerate(parts):
        write_table(df, path, mode="append" if i else "errorifexists")
    parquet = str(root / "table.parquet")
    parts[0].unionByName(parts[1]).write.parquet(parquet)
    q = QUERIES[query]
    answer = q(read_table(spark, path))
    assert_same_rows(answer, q(spark.read.parquet(parquet)))
    return answer


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_timestamp_min_max_in_whole_seconds_is_pushed_through_the_fast_field(
    spark: SparkSession, tmp_path: Path, query: str
) -> None:
    line = scan_node(_answered(spark, tmp_path, False, query))
    assert "PushedAggregation: [" in line and "time_hour" in line, line
    assert "AnsweredFromLog" not in line, line


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_timestamp_min_max_with_fractions_of_a_second_stays_with_spark(
    spark: SparkSession, tmp_path: Path, query: str
) -> None:
    line = scan_node(_answered(spark, tmp_path, True, query))
    assert "PushedAggregation" not in line, line
