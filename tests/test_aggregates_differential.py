"""Generated aggregate queries give the rows Parquet gives for the same data, pushed or not.

Metrics (COUNT(*), COUNT, SUM, AVG, MIN, MAX) x group keys (none, partition, string, integer,
boolean, date, several at once) x filters (none, exact, partition, left for Spark), on the log
data and on a typed table with NULLs, NaN, large longs and many splits. Exact types must match
exactly; doubles within a relative 1e-9 (Spark and tantivy add in different orders). Whether each
query was pushed is read from the executed plan, and a pushed query must ship at most one row
per group and split.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import pytest
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from helpers import plan_nodes, read_table, scan_node, split_files, write_table

Query = Callable[[DataFrame], DataFrame]


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return bool(a == b) and type(a) is type(b)


def _key(row: Row) -> str:
    return repr(tuple(round(v, 6) if isinstance(v, float) else v for v in row))


def assert_same_aggregates(actual_df: DataFrame, expected_df: DataFrame) -> None:
    """Same rows, same types; doubles within a relative 1e-9."""
    assert actual_df.schema == expected_df.schema, (actual_df.schema, expected_df.schema)
    actual = sorted(actual_df.collect(), key=_key)
    expected = sorted(expected_df.collect(), key=_key)
    assert len(actual) == len(expected), (len(actual), len(expected), actual[:5], expected[:5])
    for a, e in zip(actual, expected):
        assert all(_close(x, y) for x, y in zip(a, e)), f"row {a} != expected {e}"


def _scan_rows(df: DataFrame) -> int:
    """Rows the scan shipped to Spark (its numOutputRows metric); 0 when adaptive execution
    replaced a scan of no partitions by an empty relation."""
    df.collect()
    scans = [
        n
        for n in plan_nodes(df._jdf.queryExecution().executedPlan())
        if n.getClass().getSimpleName() in ("BatchScanExec", "IndexTablesLocalScanExec")
    ]
    return sum(int(n.metrics().get("numOutputRows").get().value()) for n in scans)


def _parquet(spark: SparkSession, df: DataFrame, path: str) -> DataFrame:
    df.write.mode("overwrite").parquet(path)
    return spark.read.parquet(path)


# ---------------------------------------------------------------------------------------------
# The log data (20,000 rows, NULL hosts and levels, `message` typed as text)

LOG_METRICS: list[Callable[[], Column]] = [
    lambda: F.count(F.lit(1)).alias("n"),
    lambda: F.count("status").alias("n_status"),
    lambda: F.sum("status").alias("sum_status"),
    lambda: F.avg("latency_ms").alias("avg_latency"),
    lambda: F.min("latency_ms").alias("min_latency"),
    lambda: F.max("status").alias("max_status"),
    lambda: F.sum("latency_ms").alias("sum_latency"),
    lambda: F.min("day").alias("min_day"),
    lambda: F.max("id").alias("max_id"),
    lambda: F.count("ok").alias("n_ok"),
]

LOG_GROUPS: dict[str, tuple[str, ...]] = {
    "none": (),
    "level": ("level",),
    "host": ("host",),
    "status": ("status",),
    "ok": ("ok",),
    "day": ("day",),
    "level_host": ("level", "host"),
    "day_level_ok": ("day", "level", "ok"),
}

# name -> (filter, whether it is exact: the aggregate must then be pushed)
LOG_FILTERS: dict[str, tuple[Callable[[], Column | None], bool]] = {
    "none": (lambda: None, True),
    "level_error": (lambda: F.col("level") == "ERROR", True),
    "status_range": (lambda: (F.col("status") >= 400) & (F.col("status") < 600), True),
    "host_null_or_warn": (lambda: F.col("host").isNull() | (F.col("level") == "WARN"), True),
    "nothing_matches": (lambda: F.col("status") > 100000, True),
    "text_contains": (lambda: F.col("message").contains("failed"), False),
}


@pytest.fixture(scope="module")
def log_tables(
    spark: SparkSession, logs_table: str, logs_parquet: DataFrame
) -> tuple[DataFrame, DataFrame, int]:
    return read_table(spark, logs_table), logs_parquet, len(split_files(logs_table))


@pytest.mark.parametrize("filter_name", sorted(LOG_FILTERS))
@pytest.mark.parametrize("group_name", sorted(LOG_GROUPS))
def test_log_aggregates_match_parquet(
    log_tables: tuple[DataFrame, DataFrame, int], group_name: str, filter_name: str
) -> None:
    table, parquet, splits = log_tables
    groups = LOG_GROUPS[group_name]
    make_filter, exact = LOG_FILTERS[filter_name]

    def q(d: DataFrame) -> DataFrame:
        cond = make_filter()
        filtered = d if cond is None else d.filter(cond)
        return filtered.groupBy(*groups).agg(*(m() for m in LOG_METRICS))

    assert_same_aggregates(q(table), q(parquet))
    line = scan_node(q(table))
    if exact:
        assert f"PushedGroupBy: [{', '.join(groups)}]" in line, line
        assert "SUM(status)" in line and "MIN(day)" in line, line
        assert _scan_rows(q(table)) <= splits * max(1, q(parquet).count())
    else:
        assert "PushedAggregation" not in line, line


def test_timestamp_min_max_stays_with_spark(log_tables: tuple[DataFrame, DataFrame, int]) -> None:
    # Fast fields hold timestamps to the second: MIN/MAX from them would drop the microseconds
    # (only the log's statistics answer them, without data groups or data filters).
    table, parquet, _ = log_tables

    def q(d: DataFrame) -> DataFrame:
        return d.groupBy("level").agg(F.min("ts").alias("lo"), F.max("ts").alias("hi"))

    assert "PushedAggregation" not in scan_node(q(table))
    assert_same_aggregates(q(table), q(parquet))


# ---------------------------------------------------------------------------------------------
# A typed table: several splits, a partition column, NULLs everywhere, NaN, large longs

TYPED_SCHEMA = "g string, i int, l long, big long, d double, f float, dt date, b boolean, p string"


def _typed_rows() -> list[tuple[Any, ...]]:
    import datetime as dt

    rows = []
    for k in range(6000):
        rows.append(
            (
                None if k % 11 == 0 else f"g{k % 7}",
                None if k % 13 == 0 else (k * 7919) % 20011 - 10000,
                None if k % 17 == 0 else (k * 1000003) - 3_000_000_000,
                # Large enough that a split's double sum would not be exact: SUM falls back.
                2**61 + k if k % 2 == 0 else None,
                float("nan") if k == 4321 else (None if k % 19 == 0 else k / 8.0 - 300.0),
                None if k % 23 == 0 else float(k % 50) / 4.0,
                None if k % 29 == 0 else dt.date(2024, 1, 1) + dt.timedelta(days=k % 40),
                None if k % 31 == 0 else k % 3 == 0,
                "a" if k < 2500 else ("b" if k < 5000 else None),
            )
        )
    return rows


@pytest.fixture(scope="module")
def typed_tables(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[DataFrame, DataFrame, int]:
    source = spark.createDataFrame(_typed_rows(), TYPED_SCHEMA).repartition(3)
    base = tmp_path_factory.mktemp("typed_aggs")
    write_table(
        source,
        str(base / "table"),
        partition_by=("p",),
        options={"spark.indextables.maxRowsPerSplit": "700"},
    )
    parquet = _parquet(spark, source, str(base / "parquet"))
    return read_table(spark, str(base / "table")), parquet, len(split_files(str(base / "table")))


TYPED_METRICS: list[Callable[[], Column]] = [
    lambda: F.count(F.lit(1)).alias("n"),
    lambda: F.count("l").alias("n_l"),
    lambda: F.sum("i").alias("sum_i"),
    lambda: F.sum("l").alias("sum_l"),
    lambda: F.avg("i").alias("avg_i"),
    lambda: F.min("l").alias("min_l"),
    lambda: F.max("i").alias("max_i"),
    lambda: F.sum("f").alias("sum_f"),
    lambda: F.min("f").alias("min_f"),
    lambda: F.max("dt").alias("max_dt"),
    lambda: F.count("b").alias("n_b"),
]

TYPED_GROUPS: dict[str, tuple[str, ...]] = {
    "none": (),
    "partition": ("p",),
    "string": ("g",),
    "int": ("i",),
    "long": ("l",),
    "bool_date": ("b", "dt"),
    "partition_string_bool": ("p", "g", "b"),
}

TYPED_FILTERS: dict[str, Callable[[], Column | None]] = {
    "none": lambda: None,
    "partition": lambda: F.col("p") == "a",
    "int_range": lambda: (F.col("i") > -5000) & (F.col("i") <= 2000),
    "partition_and_string": lambda: (F.col("p") == "b") & F.col("g").isin("g1", "g2"),
}


@pytest.mark.parametrize("filter_name", sorted(TYPED_FILTERS))
@pytest.mark.parametrize("group_name", sorted(TYPED_GROUPS))
def test_typed_aggregates_match_parquet(
    typed_tables: tuple[DataFrame, DataFrame, int], group_name: str, filter_name: str
) -> None:
    table, parquet, splits = typed_tables
    groups = TYPED_GROUPS[group_name]

    def q(d: DataFrame) -> DataFrame:
        cond = TYPED_FILTERS[filter_name]()
        filtered = d if cond is None else d.filter(cond)
        return filtered.groupBy(*groups).agg(*(m() for m in TYPED_METRICS))

    assert_same_aggregates(q(table), q(parquet))
    line = scan_node(q(table))
    assert f"PushedGroupBy: [{', '.join(groups)}]" in line, line
    assert _scan_rows(q(table)) <= splits * max(1, q(parquet).count())


@pytest.mark.parametrize(
    "make_agg",
    [
        lambda: F.sum("big"),  # a split's sum of longs beyond 2^53 is not an exact double
        lambda: F.max("big"),
        lambda: F.min("d"),  # d holds a NaN: still exact (the split aggregates its rows)
        lambda: F.sum("d"),
        lambda: F.countDistinct("g"),
        lambda: F.max("g"),  # tantivy4java 0.31.0 has no string min/max
    ],
    ids=["sum_big", "max_big", "min_nan", "sum_nan", "count_distinct", "max_string"],
)
def test_aggregates_the_splits_cannot_answer_exactly_are_still_right(
    typed_tables: tuple[DataFrame, DataFrame, int], make_agg: Callable[[], Column]
) -> None:
    table, parquet, _ = typed_tables

    def q(d: DataFrame) -> DataFrame:
        return d.groupBy("p").agg(make_agg().alias("v"))

    assert_same_aggregates(q(table), q(parquet))


def test_group_with_more_values_than_a_terms_list_is_exact(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # 24,000 distinct keys in one split: more than one terms aggregation returns, so the split
    # aggregates its rows itself; sums and NULL keys included.
    rows = [(None if i % 97 == 0 else f"key-{i % 24000:05d}", i, i % 5) for i in range(30000)]
    source = spark.createDataFrame(rows, "k string, v long, w int").coalesce(1)
    base = tmp_path_factory.mktemp("agg_many_metrics")
    write_table(source, str(base / "table"))
    table = read_table(spark, str(base / "table"))
    parquet = _parquet(spark, source, str(base / "parquet"))

    def q(d: DataFrame) -> DataFrame:
        return (
            d.filter(F.col("v") >= 10)
            .groupBy("k", "w")
            .agg(F.count("*").alias("n"), F.sum("v").alias("s"), F.max("v").alias("m"))
        )

    assert "PushedGroupBy: [k, w]" in scan_node(q(table))
    assert_same_aggregates(q(table), q(parquet))
